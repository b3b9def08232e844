// One way of showing a time across the site, shared by the server's pages and
// the client scripts that add rows (so a row looks the same before and after
// a reload). Always UTC: the server does not know the reader's zone, and the
// <time datetime> attribute carries the exact instant.

const DATE = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' })
const DATE_TIME = new Intl.DateTimeFormat('en-GB', {
  day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: 'UTC',
})

/** "22 Nov 2026", or with the time of day "22 Nov 2026, 21:45 UTC"; an unreadable value is shown as it is. */
export function formatUtc(iso: string, withTime = false): string {
  const date = new Date(iso)
  if (Number.isNaN(date.getTime())) return iso
  return withTime ? `${DATE_TIME.format(date)} UTC` : DATE.format(date)
}
