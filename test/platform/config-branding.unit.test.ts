// The branding settings: neutral when unset, each value checked, and a primary colour too light
// for white button text (WCAG 2.x, 4.5:1) refused with its ratio.
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'
import { contrastRatio } from '../../src/domain/colour.js'

describe('branding configuration', () => {
  it('is neutral when unset', () => {
    expect(loadConfig({})).toMatchObject({
      brandName: undefined,
      brandLogoUrl: undefined,
      brandPrimaryColor: undefined,
      brandSupportUrl: undefined,
    })
  })

  it('takes a name, an https logo or a local path, a colour and a support link', () => {
    expect(
      loadConfig({
        BRAND_NAME: 'Acme ID',
        BRAND_LOGO_URL: 'https://cdn.acme.example/logo.svg',
        BRAND_PRIMARY_COLOR: '#0A7D5A',
        BRAND_SUPPORT_URL: 'mailto:help@acme.example',
      }),
    ).toMatchObject({
      brandName: 'Acme ID',
      brandLogoUrl: 'https://cdn.acme.example/logo.svg',
      brandPrimaryColor: '#0a7d5a',
      brandSupportUrl: 'mailto:help@acme.example',
    })
    expect(loadConfig({ BRAND_LOGO_URL: '/brand/logo.png' }).brandLogoUrl).toBe('/brand/logo.png')
  })

  it('refuses a logo that is not https or a local path', () => {
    const expected = (v: string) =>
      new ConfigError([
        `BRAND_LOGO_URL must be an https:// URL or a path starting with a single /, such as https://cdn.example.com/logo.svg or /brand/logo.svg, got "${v}"`,
      ])
    for (const v of [
      'http://cdn.acme.example/logo.svg',
      '//cdn.acme.example/logo.svg',
      'data:image/svg+xml,<svg/>',
      'logo.svg',
      '/a b.png',
    ]) {
      expect(() => loadConfig({ BRAND_LOGO_URL: v })).toThrow(expected(v))
    }
  })

  it('refuses a support link that is not http(s) or mailto, and a name with control characters', () => {
    expect(() => loadConfig({ BRAND_SUPPORT_URL: 'javascript:alert(1)' })).toThrow(
      new ConfigError(['BRAND_SUPPORT_URL must be an https://, http:// or mailto: URL, got "javascript:alert(1)"']),
    )
    expect(() => loadConfig({ BRAND_NAME: 'Acme\nID' })).toThrow(
      new ConfigError(['BRAND_NAME must be at most 60 characters without control characters, got "Acme\\nID"']),
    )
  })

  it('refuses a colour that is not #rrggbb', () => {
    expect(() => loadConfig({ BRAND_PRIMARY_COLOR: 'teal' })).toThrow(
      new ConfigError(['BRAND_PRIMARY_COLOR must be a colour as #rrggbb, such as #0b57d0, got "teal"']),
    )
  })

  it('refuses a colour below 4.5:1 against white, naming its ratio, and takes one just above', () => {
    expect(() => loadConfig({ BRAND_PRIMARY_COLOR: '#ffcc00' })).toThrow(
      new ConfigError([
        'BRAND_PRIMARY_COLOR must have a contrast of at least 4.5:1 against white (WCAG 2.x: buttons carry white text on it, links are set in it on white), got "#ffcc00" with 1.51:1; choose a darker shade',
      ]),
    )
    // #e53935 (a common red) is 4.227:1: refused, its ratio rounded down so it never reads as enough. #767676 is the lightest grey at 4.5:1 or more.
    expect(() => loadConfig({ BRAND_PRIMARY_COLOR: '#e53935' })).toThrow(/with 4\.22:1; choose a darker shade$/)
    expect(() => loadConfig({ BRAND_PRIMARY_COLOR: '#777777' })).toThrow(/with 4\.47:1/)
    expect(loadConfig({ BRAND_PRIMARY_COLOR: '#767676' }).brandPrimaryColor).toBe('#767676')
  })
})

describe('contrastRatio (WCAG 2.x relative luminance)', () => {
  it('gives 21 for black on white, 1 for a colour on itself, and the published values', () => {
    expect(contrastRatio('#000000', '#ffffff')).toBe(21)
    expect(contrastRatio('#0b57d0', '#0b57d0')).toBe(1)
    expect(contrastRatio('#767676', '#ffffff')).toBeCloseTo(4.54, 2)
    expect(contrastRatio('#ffffff', '#0b57d0')).toBeCloseTo(6.39, 2)
  })
})
