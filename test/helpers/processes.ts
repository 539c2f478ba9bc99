// What Linux's /proc says about a running process: its environment and its child processes.
import { readdirSync, readFileSync } from "node:fs";

/** The process's environment as it is now (after any exec), by name. */
export function environmentOf(pid: number): Record<string, string> {
  const entries = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter(Boolean);
  return Object.fromEntries(entries.map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]));
}

/** The pids of the process's children (a child of any of its threads). */
export function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // The parent pid is the second field after the command, which is in parentheses and may hold spaces.
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid) children.push(Number(name));
    } catch {
      // it ended meanwhile
    }
  }
  return children;
}

/** The nice value of each of the process's threads, by thread id (Linux: a thread's own, inherited by what it starts). */
export function threadNiceValues(pid: number): Map<number, number> {
  const values = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      values.set(Number(tid), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]));
    } catch {
      // it ended meanwhile
    }
  }
  return values;
}
