// A small file system of its own (a tmpfs), to run out of room on: root on Linux can mount one. Tests that
// need it are skipped elsewhere (test.if(canMountSmallDisk)).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface SmallDisk {
  path: string;
  /** Takes all the free space but `leaveKb` kilobytes (0: every last block). */
  fill(leaveKb: number): void;
  /** Gives the space fill took back. */
  free(): void;
  unmount(): void;
}

/** `size` as mount takes it: "48m", "128k". */
export function mountSmallDisk(size: string): SmallDisk | null {
  if (process.platform !== "linux" || process.getuid?.() !== 0) return null;
  const path = mkdtempSync(join(tmpdir(), "quarry-small-disk-"));
  if (Bun.spawnSync(["mount", "-t", "tmpfs", "-o", `size=${size}`, "tmpfs", path], { stderr: "ignore" }).exitCode !== 0) {
    rmSync(path, { recursive: true, force: true });
    return null;
  }
  const filler = join(path, "filler");
  return {
    path,
    fill(leaveKb) {
      const free = Number(Bun.spawnSync(["df", "--output=avail", "-B1", path]).stdout.toString().split("\n")[1]);
      if (leaveKb > 0) Bun.spawnSync(["fallocate", "-l", String(free - leaveKb * 1024), filler]);
      else for (const bs of ["1M", "4k"]) Bun.spawnSync(["sh", "-c", `dd if=/dev/zero bs=${bs} >> ${filler} 2>/dev/null`]);
    },
    free: () => rmSync(filler, { force: true }),
    unmount() {
      Bun.spawnSync(["umount", "--lazy", path]); // a parser process may still be on its way out
      rmSync(path, { recursive: true, force: true });
    },
  };
}

/** Whether this machine lets the tests mount one (tried once, at load). */
export const canMountSmallDisk = (() => {
  const disk = mountSmallDisk("1m");
  disk?.unmount();
  return disk !== null;
})();
