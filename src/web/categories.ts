// Category colors as a stylesheet: the pages' CSP forbids inline styles, so a
// chip gets its color from the class `cat-<key>` defined here. Keys are
// [a-z0-9_-] and colors #rrggbb (validated when created), so both are safe
// to write into CSS as they are.

export interface CategoryColor {
  key: string
  color: string
}

/** Black or white text, whichever reads better on the color (WCAG relative luminance). */
export function textColorOn(hex: string): '#000000' | '#ffffff' {
  const channel = (i: number) => {
    const c = parseInt(hex.slice(1 + 2 * i, 3 + 2 * i), 16) / 255
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
  }
  const luminance = 0.2126 * channel(0) + 0.7152 * channel(1) + 0.0722 * channel(2)
  // Contrast against black is (L + 0.05) / 0.05, against white 1.05 / (L + 0.05); pick the larger.
  return (luminance + 0.05) / 0.05 >= 1.05 / (luminance + 0.05) ? '#000000' : '#ffffff'
}

export function categoryStylesheet(categories: CategoryColor[]): string {
  return categories
    .map((c) => `.cat-${c.key}{--chip-bg:${c.color};--chip-fg:${textColorOn(c.color)}}`)
    .join('\n') + '\n'
}
