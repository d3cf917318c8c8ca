# Runs one command and prints {"wall": s, "maxRssKb": kb, "cpu": s, "rc": n, "stderr": tail} as JSON on stdout.
# Peak RSS comes from the kernel's rusage of the waited-for child tree (the largest process),
# so relcast and the reference tools are measured the same way.
# usage: measure.py <stdout-file or -> <command> [args...]
# MEASURE_STDERR_FILE=<file> also keeps the command's whole stderr there (e.g. --debug step timings).
import json, os, resource, subprocess, sys, time

out = sys.argv[1]
before = resource.getrusage(resource.RUSAGE_CHILDREN)
start = time.perf_counter()
with open(out if out != "-" else "/dev/null", "wb") as sink:
    proc = subprocess.run(sys.argv[2:], stdout=sink, stderr=subprocess.PIPE)
wall = time.perf_counter() - start
if os.environ.get("MEASURE_STDERR_FILE"):
    with open(os.environ["MEASURE_STDERR_FILE"], "wb") as keep:
        keep.write(proc.stderr)
after = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
print(json.dumps({"wall": wall, "maxRssKb": after.ru_maxrss, "cpu": cpu, "rc": proc.returncode,
                  "stderr": proc.stderr.decode("utf-8", "replace")[-2000:]}))
