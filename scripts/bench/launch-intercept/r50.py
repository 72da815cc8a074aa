# r50.py
import os,time,torch,torchvision
m=torchvision.models.resnet50().cuda().eval();x=torch.randn(1,3,224,224,device='cuda')
a=torch.randn(1024,1024,device='cuda',dtype=torch.half)
N=int(os.environ.get('N','300'))
with torch.no_grad():
    for _ in range(30):m(x);a@a
    torch.cuda.synchronize();t=time.perf_counter()
    for _ in range(N):m(x)
    torch.cuda.synchronize();print('R50',os.environ.get('TAG'),'%.4f ms/iter'%((time.perf_counter()-t)/N*1e3),flush=True)
