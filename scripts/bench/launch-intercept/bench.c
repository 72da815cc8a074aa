/* bench.c — gcc -O2 -o bench bench.c -ldl -lpthread */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
#include <pthread.h>
#include <unistd.h>
typedef int(*g2_t)(const char*,void**,int,uint64_t,int*);
static const char ptx[]=".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(){ret;}\n";
static int(*lk)(void*,unsigned,unsigned,unsigned,unsigned,unsigned,unsigned,unsigned,void*,void**,void**);
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
static unsigned long ncb,nl;static volatile int stop;static void*sb;static int(*en)(unsigned,void*,int,unsigned);
static void cb(void*u,int dom,unsigned id,const void*d){if(*(const int*)d==0)__atomic_fetch_add(&ncb,1,__ATOMIC_RELAXED);}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
static void*tog(void*a){int P=atoi(getenv("P")?getenv("P"):"2000");double mx=0,sum=0;int n=0,on=1;long leak=0,miss=0;
 while(!stop){unsigned long l0=__atomic_load_n(&nl,0),c0=__atomic_load_n(&ncb,0);usleep(P);
  unsigned long l1=__atomic_load_n(&nl,0),c1=__atomic_load_n(&ncb,0);
  if(on)miss+=(long)(l1-l0)-(long)(c1-c0);else leak+=c1-c0;
  on=!on;double t=now();en(on,sb,1,307);t=now()-t;sum+=t;n++;if(t>mx)mx=t;}
 printf("TOG flips=%d enable_call_mean_us=%.2f max_us=%.1f off_phase_callbacks=%ld on_phase_launches_without_cb=%ld\n",n,sum/n/1e3,mx/1e3,leak,miss);return 0;}
int main(void){const char*M=getenv("M")?getenv("M"):"base";
 void*h=dlopen("libcuda.so.1",RTLD_NOW);g2_t g=(g2_t)dlsym(h,"cuGetProcAddress_v2");
#define G(n) ({void*p=0;int r=g(#n,&p,13000,0,0);if(r||!p){printf("gpa %s rc=%d\n",#n,r);exit(1);}p;})
 int(*init)(unsigned)=G(cuInit);init(0);
 int(*dget)(int*,int)=G(cuDeviceGet);int dev;dget(&dev,0);
 int(*ret)(void**,int)=G(cuDevicePrimaryCtxRetain);void*ctx;ret(&ctx,dev);
 int(*setc)(void*)=G(cuCtxSetCurrent);setc(ctx);
 int(*mld)(void**,const void*)=G(cuModuleLoadData);void*m;int r=mld(&m,ptx);if(r){printf("mld %d\n",r);return 1;}
 int(*gf)(void**,void*,const char*)=G(cuModuleGetFunction);void*f;gf(&f,m,"k");
 int(*sc)(void**,unsigned)=G(cuStreamCreate);void*st;sc(&st,1);
 int(*ss)(void*)=G(cuStreamSynchronize);lk=G(cuLaunchKernel);
 if(strcmp(M,"base")){void*c=dlopen(getenv("CUPTI"),RTLD_NOW);if(!c){printf("no cupti\n");return 1;}
  int(*sub)(void**,void*,void*)=dlsym(c,"cuptiSubscribe");en=dlsym(c,"cuptiEnableCallback");
  r=sub(&sb,(void*)cb,0);if(!strcmp(M,"lk")||!strcmp(M,"tog"))r|=en(1,sb,1,307);if(!strcmp(M,"other"))r|=en(1,sb,1,442);if(r){printf("cupti rc %d\n",r);return 1;}}
 int B=atoi(getenv("B")?getenv("B"):"200"),K=256,n=0;double*s=malloc(sizeof(double)*B*K),tot=0;
 for(int i=0;i<2048;i++){lk(f,1,1,1,32,1,1,0,st,0,0);if(i%256==255)ss(st);}ss(st);
 pthread_t th;if(!strcmp(M,"tog"))pthread_create(&th,0,tog,0);
 for(int b=0;b<B;b++){for(int i=0;i<K;i++){double t0=now();r=lk(f,1,1,1,32,1,1,0,st,0,0);double t=now()-t0;s[n++]=t;tot+=t;__atomic_fetch_add(&nl,1,__ATOMIC_RELAXED);}ss(st);}
 if(r)printf("launch rc %d\n",r);
 stop=1;if(!strcmp(M,"tog"))pthread_join(th,0);
 qsort(s,n,sizeof(double),cmp);
 printf("BENCH %-6s %s n=%d mean=%.0f p50=%.0f p90=%.0f p99=%.0f p999=%.0f max=%.0f ns cb=%lu\n",M,getenv("LD_PRELOAD")?"preload":"-",n,tot/n,s[n/2],s[n*9/10],s[n*99/100],s[n*999/1000],s[n-1],ncb);return 0;}
