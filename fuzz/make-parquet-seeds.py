"""Writes fuzz/seeds/trace_reader/every_column_plain.parquet: the fixture trace
rewritten without compression or dictionary encoding, so the fuzzer's byte
mutations reach the values (a mutated zstd page just fails to decompress).
Needs pyarrow. Usage: python3 fuzz/make-parquet-seeds.py"""
import pathlib
import pyarrow.parquet as pq

seeds = pathlib.Path(__file__).parent / "seeds" / "trace_reader"
src = seeds / "every_column_zstd.parquet"
# The fikit.* keys are file-level key/value metadata: carry them over.
kv = pq.read_metadata(src).metadata
table = pq.read_table(src)
table = table.replace_schema_metadata({**(table.schema.metadata or {}), **kv})
pq.write_table(table, seeds / "every_column_plain.parquet", compression="none",
               use_dictionary=False, write_statistics=False)
