export function makeSamplePlugin(o: {
  dir: string;
  version: string;
  build: number;
  publicKey?: string;
  name?: string;
  dmgBytes?: number;
}): Promise<{ app: string; dmg: string; notes: string }>;
