/**
 * What this machine charges for waking another process, printed beside each read and write
 * scenario so that runs on different machines can be compared. The service's costs are mostly
 * such wake-ups (a write to Redis or PostgreSQL while it sleeps between turns, an answer to a
 * client waiting for it), stock Yoga's mostly JavaScript; on a VM where a wake-up is dear the
 * service loses against the baseline without doing any more work (bench/RESULTS.md, "a thirteenth
 * machine").
 *
 * The probe: a peer process echoes 64 bytes over loopback TCP, one message in flight, so that the
 * peer sleeps in epoll between messages as the stores do between a lightly loaded service's turns.
 */
import { once } from 'node:events';
import { type AddressInfo, type Socket, createConnection, createServer } from 'node:net';
import { processSeconds } from './cpu.js';
import { spawnListening } from './listening-child.js';

export interface WakeupCost {
  /** Round trips timed. */
  trips: number;
  /** µs of wall time a round trip. */
  wallUs: number;
  /** µs of the caller's CPU a round trip (its write, its wake-up, reading the echo, the loop's own JavaScript). */
  callerUs: number;
  /** µs of the peer's CPU a round trip (from /proc: 10 ms ticks, so ± 10,000 / trips). */
  peerUs: number;
  /** µs of CPU a round trip to an echo server in the caller's own process (both ends' work, nobody woken). */
  inProcessUs: number;
}

/** The echo server's connection handler, the same in the peer process (as its source) and in this one. */
const echo = (socket: Socket) => {
  socket.setNoDelay(true);
  socket.on('data', (chunk) => socket.write(chunk));
};

/** The peer: echoes whatever it reads, and prints `listening <port>` once listening. */
const PEER = `
const server = require('node:net').createServer(${echo.toString()});
server.listen(0, '127.0.0.1', () => console.log('listening ' + server.address().port));
`;

/** µs of wall time and of this process's CPU a round trip of 64 bytes to `port`, `trips` of them after 200 to warm up. */
async function roundTrips(port: number, trips: number): Promise<{ wallUs: number; cpuUs: number }> {
  const socket = createConnection({ host: '127.0.0.1', port });
  socket.setNoDelay(true);
  await once(socket, 'connect');
  try {
    const message = Buffer.alloc(64, 'x');
    const roundTrip = () =>
      new Promise<void>((resolve) => {
        let read = 0;
        const onData = (chunk: Buffer) => {
          read += chunk.length;
          if (read < message.length) return;
          socket.off('data', onData);
          resolve();
        };
        socket.on('data', onData);
        socket.write(message);
      });
    for (let i = 0; i < 200; i++) await roundTrip();
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    for (let i = 0; i < trips; i++) await roundTrip();
    const wallUs = ((performance.now() - started) * 1000) / trips;
    const cpu = process.cpuUsage(cpuBefore);
    return { wallUs, cpuUs: (cpu.user + cpu.system) / trips };
  } finally {
    socket.destroy();
  }
}

/**
 * Times `trips` round trips of 64 bytes to a peer process (default 5,000, under a second on a
 * quiet machine), and the same to an echo server in this process, whose reader never sleeps: the
 * difference is what waking the peer costs.
 */
export async function measureWakeup(trips = 5_000): Promise<WakeupCost> {
  const local = createServer(echo);
  local.listen(0, '127.0.0.1');
  await once(local, 'listening');
  const inProcess = await roundTrips((local.address() as AddressInfo).port, trips).finally(() => local.close());
  const { child: peer, port } = await spawnListening(['-e', PEER], "the wake-up probe's peer");
  try {
    const peerBefore = processSeconds(peer.pid!) ?? 0;
    const { wallUs, cpuUs } = await roundTrips(port, trips);
    const peerUs = (((processSeconds(peer.pid!) ?? 0) - peerBefore) * 1e6) / trips;
    return { trips, wallUs, callerUs: cpuUs, peerUs, inProcessUs: inProcess.cpuUs };
  } finally {
    peer.kill();
  }
}

/** The note a scenario prints: "machine: a loopback round trip to a sleeping peer costs …". */
export function wakeupNote(cost: WakeupCost): string {
  const us = (value: number) => value.toFixed(1);
  return (
    `machine: a loopback round trip of 64 bytes to a peer process that sleeps between messages costs ${us(cost.callerUs)} µs of the caller's CPU ` +
    `and ${us(cost.peerUs)} of the peer's, ${us(cost.wallUs)} µs of wall time; ${us(cost.inProcessUs)} µs of CPU to an echo in the same process ` +
    `(${cost.trips.toLocaleString('en-US')} trips each, bench/lib/wakeup.ts)`
  );
}
