#!/usr/bin/env python3
"""Makes the files in this folder from the public originals (README.md lists
them with their repositories, commits and licences), smaller and otherwise
unchanged:

- PyTorch profiler traces: the events of categories no metric reads are
  dropped (python_function, cpu_op, fwdbwd, and the ac2g flow arrows); every
  kernel, copy, memset, synchronisation, runtime/driver call and annotation
  is kept as it was, and so are the top-level fields. Written as .json.gz.
- Nsight Systems SQLite exports: the tables of host sampling and OS tracing
  are dropped, PROCESSES keeps the processes that have GPU or API activity
  (nsys lists every process of the machine), and StringIds keeps the strings
  still referenced, under their original ids (a trimmed export: its ids are
  sparse). Every CUDA activity row is kept. Written as .sqlite.gz.

    trim_real_traces.py SOURCE_DIR OUT_DIR

SOURCE_DIR holds the originals under their repository paths, e.g.
SOURCE_DIR/HolisticTraceAnalysis/tests/data/amd_trace/... (see FILES)."""

import gzip
import json
import os
import shutil
import sqlite3
import sys
import tempfile

# (source under SOURCE_DIR, destination under OUT_DIR)
FILES = [
    ("HolisticTraceAnalysis/tests/data/trace_filter/sampled_rank-0.json.gz", "hta/trace_filter/sampled_rank-0.json.gz"),
    ("HolisticTraceAnalysis/tests/data/trace_filter/sampled_rank-1.json.gz", "hta/trace_filter/sampled_rank-1.json.gz"),
    ("HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz", "hta/nccl_data.json.gz"),
    ("HolisticTraceAnalysis/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
     "hta/mi250_minitoy_train_ROCm6_2_kineto.json.gz"),
    ("TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz", "tracelens/resnet_act_checkpoint.json.gz"),
    ("TraceLens/tests/traces/b200/eager_trace.json.gz", "tracelens/b200_eager_trace.json.gz"),
    ("pipit/pipit/tests/data/cloverleaf-nsys/perlmutter-cloverleaf-cuda.sqlite",
     "pipit/perlmutter-cloverleaf-cuda.sqlite.gz"),
    ("pipit/pipit/tests/data/saxpy-mpi-cuda_nsys_perlmutter0.sqlite", "pipit/saxpy-mpi-cuda_nsys_perlmutter0.sqlite.gz"),
]

DROPPED_CATEGORIES = {"python_function", "cpu_op", "fwdbwd", "ac2g"}

# Tables an overlap analysis never reads: host sampling, scheduling, OS calls.
DROPPED_TABLES = {"SCHED_EVENTS", "COMPOSITE_EVENTS", "SAMPLING_CALLCHAINS", "OSRT_API", "OSRT_CALLCHAINS",
                  "CUDA_CALLCHAINS", "DIAGNOSTIC_EVENT", "PROFILER_OVERHEAD", "ANALYSIS_FILE"}


def trim_kineto(src, dst):
    with gzip.open(src, "rt") as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    kept = [e for e in events if e.get("cat") not in DROPPED_CATEGORIES]
    if isinstance(doc, dict):
        doc["traceEvents"] = kept
    else:
        doc = kept
    with gzip.GzipFile(dst, "wb", compresslevel=9, mtime=0) as f:
        f.write(json.dumps(doc, separators=(",", ":")).encode())


def string_columns(db):
    """(table, column) pairs holding StringIds ids: nsys names them *Id or
    *Name (demangledName, shortName, nameId, textId, ...)."""
    out = []
    for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
        if table == "StringIds":
            continue
        for _, column, ctype, *_ in db.execute(f'PRAGMA table_info("{table}")'):
            refs = column in ("demangledName", "shortName", "mangledName", "nameId", "textId", "jsonTextId",
                              "name", "value", "domainId") or column.endswith("NameId") or column.endswith("StrId")
            if refs and ctype.upper().startswith("INT"):
                out.append((table, column))
    return out


def trim_nsys(src, dst):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trimmed.sqlite")
        shutil.copyfile(src, path)
        db = sqlite3.connect(path)
        tables = {t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        for t in tables & DROPPED_TABLES:
            db.execute(f'DROP TABLE "{t}"')
        active = set()
        for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
                  "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"):
            if t in tables:
                active |= {p for (p,) in db.execute(f"SELECT DISTINCT globalPid FROM {t}")}
        for t in ("CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS"):
            if t in tables:
                active |= {(g >> 24) << 24 for (g,) in db.execute(f"SELECT DISTINCT globalTid FROM {t}") if g}
        if "PROCESSES" in tables and active:
            db.execute("CREATE TEMP TABLE keep (globalPid INTEGER PRIMARY KEY)")
            db.executemany("INSERT INTO keep VALUES (?)", [(p,) for p in active])
            db.execute("DELETE FROM PROCESSES WHERE globalPid NOT IN (SELECT globalPid FROM keep)")
        used = set()
        for table, column in string_columns(db):
            used |= {v for (v,) in db.execute(f'SELECT DISTINCT "{column}" FROM "{table}"') if isinstance(v, int)}
        db.execute("CREATE TEMP TABLE used (id INTEGER PRIMARY KEY)")
        db.executemany("INSERT INTO used VALUES (?)", [(i,) for i in used])
        db.execute("DELETE FROM StringIds WHERE id NOT IN (SELECT id FROM used)")
        db.commit()
        db.execute("VACUUM")
        db.close()
        with open(path, "rb") as f, gzip.GzipFile(dst, "wb", compresslevel=9, mtime=0) as out:
            out.write(f.read())


def main(source_dir, out_dir):
    for src, dst in FILES:
        s, d = os.path.join(source_dir, src), os.path.join(out_dir, dst)
        os.makedirs(os.path.dirname(d), exist_ok=True)
        (trim_nsys if src.endswith(".sqlite") else trim_kineto)(s, d)
        print(f"{dst}: {os.path.getsize(s)} -> {os.path.getsize(d)} bytes")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
