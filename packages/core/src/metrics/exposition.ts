// Reading the Prometheus text exposition back: what the tests and the benchmarks that scrape an
// endpoint use to pick one sample. Deliberately small: `name{label="value",...} number` lines.
export interface Sample {
  name: string;
  labels: Readonly<Record<string, string>>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const match = LINE.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const label of (match[2] ?? "").matchAll(LABEL)) labels[label[1]!] = label[2]!.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of the samples named `name` whose labels include `labels` (0 when there are none). */
export function sampleSum(samples: readonly Sample[], name: string, labels: Readonly<Record<string, string>> = {}): number {
  let total = 0;
  for (const sample of samples) {
    if (sample.name !== name) continue;
    if (Object.entries(labels).every(([k, v]) => sample.labels[k] === v)) total += sample.value;
  }
  return total;
}
