// The unrelated tenant: all through the run it lists its knowledge bases a few times a second, like a
// normal client on a kept-alive connection, and records how long each answer took.
const INTERVAL_MS = 250; // 4 requests per second, under the trial's 5

export interface LatencySummary {
  count: number;
  p50: number;
  p95: number;
  max: number;
  /** Answers other than 200 (429s included), and requests that failed outright. */
  non200: number;
  failed: number;
  /** The slowest requests: when they started (epoch ms) and how long they took (a failed one counts its wait). */
  slowest: { at: number; ms: number }[];
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export class BackgroundTenant {
  private readonly latencies: number[] = [];
  private readonly samples: { at: number; ms: number }[] = [];
  private non200 = 0;
  private failed = 0;
  private running = false;
  private loop: Promise<void> | null = null;

  constructor(
    private readonly baseUrl: () => string,
    private readonly apiKey: string,
  ) {}

  start(): void {
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<LatencySummary> {
    this.running = false;
    await this.loop;
    const sorted = [...this.latencies].sort((a, b) => a - b);
    return {
      count: sorted.length,
      p50: percentile(sorted, 50),
      p95: percentile(sorted, 95),
      max: sorted.at(-1) ?? 0,
      non200: this.non200,
      failed: this.failed,
      slowest: [...this.samples].sort((a, b) => b.ms - a.ms).slice(0, 5),
    };
  }

  private async run(): Promise<void> {
    while (this.running) {
      const started = performance.now();
      const at = Date.now();
      try {
        const res = await fetch(`${this.baseUrl()}/api/v1/knowledge-bases`, {
          headers: { authorization: `Bearer ${this.apiKey}` },
          signal: AbortSignal.timeout(30_000),
        });
        await res.arrayBuffer();
        this.latencies.push(performance.now() - started);
        if (res.status !== 200) this.non200++;
      } catch {
        this.failed++; // the server was down or did not answer in 30 s
      }
      this.samples.push({ at, ms: performance.now() - started });
      await Bun.sleep(Math.max(0, INTERVAL_MS - (performance.now() - started)));
    }
  }
}
