import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from './helpers/test-app.js';
import { settle } from './helpers/wait.js';

/**
 * /metrics as stock dashboards expect it, and the dashboard and alert rules shipped in ops/: Node's
 * default metrics under their standard names, the service's own prefixed, every PostgreSQL and
 * Redis call timed, each label's values in its HELP, and every metric the ops files query present
 * on a running service.
 */

const DASHBOARD = 'ops/grafana-dashboard.json';
const RULES = 'ops/prometheus-alerts.yml';
/** Labels whose every value the HELP must name (the others are ids: boards, buckets, fields, commands). */
const ENUMERATED_LABELS = ['outcome', 'store', 'type', 'period'];

interface Family {
  help: string;
  samples: { name: string; labels: Record<string, string>; value: number }[];
}

function parseMetrics(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const familyOf = (sample: string) =>
    [...families.keys()].find((name) => sample === name || new RegExp(`^${name}_(bucket|sum|count|total|created)$`).test(sample));
  for (const line of text.split('\n')) {
    const help = /^# HELP (\S+) (.*)$/.exec(line);
    if (help) families.set(help[1]!, { help: help[2]!, samples: [] });
    if (line.startsWith('#') || line.trim() === '') continue;
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)/.exec(line);
    if (!sample) continue;
    const labels = Object.fromEntries([...(sample[3] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((match) => [match[1]!, match[2]!]));
    families.get(familyOf(sample[1]!) ?? sample[1]!)?.samples.push({ name: sample[1]!, labels, value: Number(sample[4]) });
  }
  return families;
}

/** The metric names an expression queries (ours and Node's; Prometheus's own `up` is not the service's). */
const metricsIn = (expression: string) => [...expression.matchAll(/\b((?:leaderboard|process|nodejs)_[a-z0-9_]+)\b/g)].map((match) => match[1]!);

describe('metrics and the ops files', () => {
  let t: TestApp;
  let families: Map<string, Family>;
  let names: Set<string>;

  beforeAll(async () => {
    t = await startTestApp();
    expect(
      (await t.server('mutation { submitScore(input: {board: "global", playerId: "ada", score: 10, matchId: "m1"}) { duplicate } }')).errors,
    ).toBeUndefined();
    expect((await t.gql('{ top(board: "global") { size } standing(board: "global", playerId: "ada") { rank } }')).errors).toBeUndefined();
    expect((await t.gql('{ top(board: "nope") { size } }')).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    // The first scrape starts the drift measurement in the background (jobs/index-drift.ts); a later one serves it.
    const text = await settle(
      async () => (await fetch(`${t.url}/metrics`)).text(),
      (scraped) => /^leaderboard_index_drift\{/m.test(scraped),
      5_000,
    );
    families = parseMetrics(text);
    names = new Set([...families.values()].flatMap((family) => family.samples.map((sample) => sample.name)));
  });

  it("keeps Node's default metrics under their standard names and prefixes only the service's own", () => {
    for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_p99_seconds'])
      expect(names, name).toContain(name);
    const ours = [...families.keys()].filter((name) => !name.startsWith('process_') && !name.startsWith('nodejs_'));
    expect(ours.length).toBeGreaterThan(5);
    for (const name of ours) expect(name).toMatch(/^leaderboard_/);
    expect([...families.keys()].filter((name) => /^leaderboard_(process|nodejs)_/.test(name))).toEqual([]);
  });

  it('counts every statement sent to PostgreSQL, those of a transaction included', () => {
    const [sample] = families.get('leaderboard_postgres_statements_total')!.samples;
    const transactions = families
      .get('leaderboard_store_seconds')!
      .samples.find(
        (s) => s.name === 'leaderboard_store_seconds_count' && s.labels.store === 'postgres' && s.labels.call === 'begin' && s.labels.outcome === 'ok',
      );
    // At least BEGIN, a statement and COMMIT for each transaction (the submission's among them).
    expect(transactions?.value).toBeGreaterThan(0);
    expect(sample?.value).toBeGreaterThanOrEqual(3 * transactions!.value);
  });

  it('times PostgreSQL and Redis calls by store and operation', () => {
    const timed = families.get('leaderboard_store_seconds')!.samples.filter((sample) => sample.name === 'leaderboard_store_seconds_count');
    const calls = (store: string) => new Set(timed.filter((sample) => sample.labels.store === store).map((sample) => sample.labels.call));
    expect([...calls('postgres')]).toEqual(expect.arrayContaining(['select', 'begin']));
    // The submission's index write and the reads' scripts.
    expect([...calls('redis')]).toEqual(expect.arrayContaining(['applyScores', 'readTop']));
  });

  it('names in its HELP every value each enumerated label takes', () => {
    for (const [name, family] of families) {
      if (!name.startsWith('leaderboard_')) continue;
      for (const sample of family.samples) {
        for (const label of ENUMERATED_LABELS) {
          const value = sample.labels[label];
          if (value === undefined || value === '') continue;
          for (const part of value.split(',')) expect(family.help, `${name} ${label}="${part}"`).toContain(part);
        }
      }
    }
  });

  it('every metric the Grafana dashboard and the Prometheus rules query exists on the running service', () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: { title: string; targets: { expr: string }[] }[] };
    const rules = readFileSync(RULES, 'utf8');
    const expressions = [
      ...dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr)),
      ...[...rules.matchAll(/^\s+expr: (.+)$/gm)].map((match) => match[1]!),
    ];
    expect(dashboard.panels.length).toBeGreaterThan(5);
    expect(expressions.length).toBeGreaterThan(15);
    const queried = new Set(expressions.flatMap(metricsIn));
    expect(queried.size).toBeGreaterThan(8);
    for (const name of queried) expect(names, `${name} (queried in ops/)`).toContain(name);
  });
});
