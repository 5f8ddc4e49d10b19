/**
 * Preloaded into the service the bench measures (`node --import`, see service.ts): counts the bytes
 * the process allocates on its JavaScript heap, and answers the running total as plain text to any
 * request on the Unix socket named by BENCH_ALLOCATION_SOCKET (store-calls.ts reads it beside
 * /metrics). Why: on a shared machine an allocation a request is steadier than CPU a request, so a
 * change that allocates less shows there when the CPU figure moves within the runs' noise
 * (bench/RESULTS.md, "a sixth machine").
 *
 * What is counted: for every collection, the heap used before it less the heap used after the one
 * before (v8.GCProfiler), plus the heap grown since the last collection. Off when WORKERS runs more
 * than one process: each would count only its own.
 */
import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import process from 'node:process';
import { setInterval } from 'node:timers';
import { GCProfiler, getHeapStatistics } from 'node:v8';

const socket = process.env.BENCH_ALLOCATION_SOCKET;
if (socket && Number(process.env.WORKERS ?? 1) <= 1) {
  let allocated = 0;
  let usedAfterLast = getHeapStatistics().used_heap_size;
  let profiler = new GCProfiler();
  profiler.start();

  /** Adds what the collections since the last call account for, and the heap grown since; answers the total. */
  const fold = () => {
    const { statistics } = profiler.stop();
    profiler = new GCProfiler();
    profiler.start();
    for (const { beforeGC, afterGC } of statistics) {
      allocated += beforeGC.heapStatistics.usedHeapSize - usedAfterLast;
      usedAfterLast = afterGC.heapStatistics.usedHeapSize;
    }
    const used = getHeapStatistics().used_heap_size;
    allocated += used - usedAfterLast;
    usedAfterLast = used;
    return allocated;
  };
  // Folded now and then as well, so that the profiler's record of collections stays short.
  setInterval(fold, 5_000).unref();
  const server = createServer((_req, res) => res.end(String(fold())));
  // A socket file left by a process that died is in the way of listening.
  rmSync(socket, { force: true });
  server.listen(socket);
  server.unref();
  process.once('exit', () => rmSync(socket, { force: true }));
}
