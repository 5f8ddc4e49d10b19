import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, SERVER_KEY, type TestApp, startTestApp } from './helpers/test-app.js';
import { until } from './helpers/wait.js';

/**
 * The README's tour, as a newcomer follows it: every shell command and TypeScript snippet of "A
 * tour", in order, against a fresh service (a test app stands in for `npm start`), each checked
 * for what the README says it shows. A command that stops working as written fails here.
 */

interface Block {
  lang: 'sh' | 'ts';
  code: string;
}

const readme = readFileSync('README.md', 'utf8');
const tour = readme.slice(readme.indexOf('## A tour'), readme.indexOf('## Read next'));
const blocks: Block[] = [...tour.matchAll(/```(sh|ts)\n([\s\S]*?)```/g)].map((match) => ({ lang: match[1] as Block['lang'], code: match[2]! }));

/** The tour's service address and keys, as the test app has them. */
function here(code: string, url: string): string {
  return code
    .replaceAll('http://127.0.0.1:4000', url)
    .replaceAll('https://scores.example.com', url)
    .replaceAll('admin-key-change-me', ADMIN_KEY)
    .replaceAll('server-key-change-me', SERVER_KEY);
}

/**
 * A child's output as it comes, a way to wait for it to end, and to stop it: the child leads a
 * process group of its own, so stopping it stops what it started too (npx's tsx, bash's curl).
 */
function run(command: string, args: string[]): { output: () => string; done: Promise<number | null>; stop: () => void } {
  const child: ChildProcess = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const done = new Promise<number | null>((resolve) => child.on('close', resolve));
  const stop = () => {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGTERM');
  };
  return { output: () => text, done, stop };
}

describe('the README tour', () => {
  let t: TestApp;
  const scratch = join('test-results', `readme-tour-${process.pid}`);
  beforeAll(async () => {
    t = await startTestApp();
    mkdirSync(scratch, { recursive: true });
  });
  afterAll(async () => {
    rmSync(scratch, { recursive: true, force: true });
    await t?.close();
  });

  it('has the blocks it is read by: start, the gql function, the commands, the live top, two snippets', () => {
    expect(blocks.map((block) => block.lang)).toEqual(['sh', 'sh', 'sh', 'sh', 'sh', 'sh', 'sh', 'sh', 'sh', 'sh', 'ts', 'ts']);
    expect(blocks[0]!.code).toContain('npm start');
    expect(blocks[1]!.code).toMatch(/^gql\(\)/);
  });

  it('works as written, command by command', { timeout: 120_000 }, async () => {
    const [, shell, ...rest] = blocks;
    const prelude = here(shell!.code, t.url);
    /** Runs a shell block after the gql function; answers every JSON line it printed. */
    const sh = async (block: Block) => {
      const { output, done } = run('bash', ['-c', `set -eu\n${prelude}\n${here(block.code, t.url)}`]);
      expect(await done, output()).toBe(0);
      const answers = output()
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as { data?: Record<string, unknown>; errors?: unknown });
      for (const answer of answers) expect(answer.errors, JSON.stringify(answer)).toBeUndefined();
      return answers.map((answer) => answer.data!);
    };
    const shells = rest.filter((block) => block.lang === 'sh');
    const [board, players, results, reads, get, seasons, live, another] = shells;

    expect(await sh(board!)).toMatchObject([{ createBoard: { id: 'race' } }]);
    expect(await sh(players!)).toEqual([
      { upsertPlayer: { id: 'ada', displayName: 'Ada' } },
      { upsertPlayer: { id: 'björn', displayName: 'Björn' } },
      { setFriends: 2 },
    ]);

    // Two players at rank 1 in one answer, each placed as of its own moment, as the README says.
    const [submitted] = await sh(results!);
    type Answer = { duplicate: boolean; standings: { period: string; region: string | null; standing: { rank: number } }[] }[];
    const [ada, bjorn, chen] = submitted!.submitScores as Answer;
    const allTime = (answer: Answer[number]) => answer.standings.find((at) => at.period === 'ALL_TIME' && at.region === null)!.standing.rank;
    expect([allTime(ada!), allTime(bjorn!), allTime(chen!)]).toEqual([1, 1, 3]);

    const [top, standing, around, friends, standings] = await sh(reads!);
    const ids = (entries: { player: { id: string } }[]) => entries.map((entry) => entry.player.id);
    expect(ids((top!.top as { entries: { player: { id: string } }[] }).entries)).toEqual(['björn', 'ada', 'chen']);
    expect(standing!.standing).toMatchObject({ rank: 2, score: 61250 });
    expect(ids(around!.around as { player: { id: string } }[])).toEqual(['björn', 'ada', 'chen']);
    expect(ids(friends!.friends as { player: { id: string } }[])).toEqual(['björn', 'ada', 'chen']);
    expect(standings!.standings).toMatchObject({ pageInfo: { hasNextPage: false } });
    expect(await sh(get!)).toMatchObject([{ top: { size: 3 } }]);

    const season = await sh(seasons!);
    expect(season.at(-1)).toEqual({ seasonResults: { edges: [{ node: { rank: 1, score: 60110, player: { id: 'ada' } } }] } });

    // The live top over server-sent events, with curl; then another result arrives on it.
    const stream = run('bash', ['-c', here(live!.code, t.url)]);
    try {
      await until(
        () => stream.output().includes('event: next'),
        10_000,
        () => `the first view: ${stream.output()}`,
      );
      await sh(another!);
      await until(
        () => /"entries":\[\{"rank":1,"score":58200,"player":\{"id":"chen"\}\}/.test(stream.output()),
        10_000,
        () => `chen's new view: ${stream.output()}`,
      );
    } finally {
      stream.stop();
    }
  });

  it('runs both TypeScript snippets with npx tsx, as it says', { timeout: 120_000 }, async () => {
    const [node, browser] = blocks.filter((block) => block.lang === 'ts');
    /** The snippet as a file beside the tests' output, its import of the client pointed there. */
    const file = (name: string, block: Block) => {
      const path = join(scratch, name);
      writeFileSync(path, here(block.code, t.url).replace("'./client/src/index.js'", `'${relative(scratch, 'client/src/index.js')}'`));
      return path;
    };
    const server = run('npx', ['tsx', file('tour.ts', node!)]);
    expect(await server.done, server.output()).toBe(0);
    expect(server.output()).toContain('ALL_TIME all: #1');

    // The browser game's live top never ends by itself: stopped once a view is printed.
    const game = run('npx', ['tsx', file('game.ts', browser!)]);
    try {
      await until(
        () => /^1\. Ada: 1200$/m.test(game.output()),
        30_000,
        () => `the live top printed: ${game.output()}`,
      );
    } finally {
      game.stop();
    }
    expect(game.output()).not.toMatch(/Error/);
  });
});
