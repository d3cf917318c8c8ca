export function makeSamplePlugin(o: {
  dir: string;
  version: string;
  build: number;
  publicKey?: string;
  name?: string;
  dmgBytes?: number;
  /** Written to Contents/Resources/<file> and named by CFBundleIconFile (without .icns). */
  icon?: { file: string; bytes: Buffer };
  /** More Info.plist strings (e.g. CFBundleDisplayName). */
  plist?: Record<string, string>;
}): Promise<{ app: string; dmg: string; notes: string }>;
