// Monthly billing periods anchored at signup (or the subscription's start): the period containing `now`
// starts on the anchor's day-of-month (clamped to short months) at the anchor's time of day.

export interface Period {
  start: Date;
  end: Date;
}

function addMonths(anchor: Date, months: number): Date {
  const year = anchor.getUTCFullYear();
  const month = anchor.getUTCMonth() + months;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return new Date(
    Date.UTC(
      year,
      month,
      Math.min(anchor.getUTCDate(), lastDay),
      anchor.getUTCHours(),
      anchor.getUTCMinutes(),
      anchor.getUTCSeconds(),
      anchor.getUTCMilliseconds(),
    ),
  );
}

export function currentPeriod(anchorIso: string, now: Date): Period {
  const anchor = new Date(anchorIso);
  let months = (now.getUTCFullYear() - anchor.getUTCFullYear()) * 12 + (now.getUTCMonth() - anchor.getUTCMonth());
  if (addMonths(anchor, months) > now) months -= 1;
  months = Math.max(0, months);
  return { start: addMonths(anchor, months), end: addMonths(anchor, months + 1) };
}
