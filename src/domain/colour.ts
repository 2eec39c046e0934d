// sRGB colours as #rrggbb: WCAG 2.x contrast (relative luminance, §1.4.3 "Contrast (Minimum)")
// and the mixes the stylesheet derives from the operator's primary colour.

export const HEX_COLOUR = /^#[0-9a-fA-F]{6}$/

function channels(hex: string): [number, number, number] {
  const n = Number.parseInt(hex.slice(1), 16)
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255]
}

/** WCAG 2.x relative luminance: 0 for black, 1 for white. */
export function relativeLuminance(hex: string): number {
  const [r, g, b] = channels(hex).map((c) => {
    const s = c / 255
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4
  }) as [number, number, number]
  return 0.2126 * r + 0.7152 * g + 0.0722 * b
}

/** WCAG 2.x contrast ratio, from 1 (none) to 21 (black on white). */
export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x) as [number, number]
  return (hi + 0.05) / (lo + 0.05)
}

/** `amount` of `other` mixed into `hex` (0: hex itself, 1: other), channel by channel. */
export function mix(hex: string, other: string, amount: number): string {
  const a = channels(hex)
  const b = channels(other)
  return `#${a
    .map((c, i) =>
      Math.round(c + (b[i]! - c) * amount)
        .toString(16)
        .padStart(2, '0'),
    )
    .join('')}`
}
