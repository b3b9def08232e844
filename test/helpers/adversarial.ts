// Adversarial text for the regular expressions and hand parsers that read
// request input: test/unit/regex-redos.test.ts calls them
// directly, test/http/regex-redos.test.ts sends the text through the app.

/** Text of about `size` characters built to make a backtracking matcher try every split. */
export function adversarial(size: number): Record<string, string> {
  const fill = (unit: string) => unit.repeat(Math.ceil(size / unit.length)).slice(0, size)
  const half = Math.floor(size / 2)
  return {
    spaces: fill(' '),
    tabs: fill('\t'),
    'tabs, dash, tabs, x': `${'\t'.repeat(half)}-${'\t'.repeat(half)}x`,
    'spaces, equals, spaces, x': `${' '.repeat(half)}=${' '.repeat(half)}x`,
    digits: fill('9'),
    'digits then x': `${fill('9')}x`,
    'digit-dash pairs': fill('1-'),
    dashes: fill('-'),
    'dashes then x': `${fill('-')}x`,
    semicolons: fill(';'),
    'semicolon-space pairs': fill('; '),
    'repeated boundary=': fill('; boundary='),
    'unclosed quote': `"${fill('a')}`,
    quotes: fill('"'),
    'escaped quotes': fill('\\"'),
    backslashes: fill('\\'),
    slashes: fill('/'),
    'W/ prefixes': fill('W/'),
    'W/" pieces': fill('W/"'),
    'comma-space lists': fill(', '),
    'percent escapes': fill('%2e'),
    'dot-slash': fill('./'),
    brackets: fill('['),
    braces: fill('{'),
    'open-close pairs': fill('[]'),
    'quoted brackets': `"${fill('[')}"`,
    'letters then !': `${fill('a')}!`,
    'a- then !': `${fill('a-')}!`,
    'hex runs': fill('0123456789abcdef'),
    'uuid-like': fill('00000000-0000-'),
    controls: fill('\u0000\u0001\u001f'),
    'lone surrogates': fill('\ud800'),
    'accented letters': fill('é'),
    'combining marks': fill('e\u0301'),
    'scheme-like': fill('a:'),
    'control-space runs': fill('\u0000 \t'),
  }
}
