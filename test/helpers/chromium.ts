import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

const CANDIDATES = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].filter((p): p is string => Boolean(p));

/** Debian's chromium (or $CHROMIUM_PATH). Under CI=true a missing browser fails the run; elsewhere tests skip saying why. */
export function chromiumPath(): { path?: string; reason?: string } {
  const found = CANDIDATES.find((p) => existsSync(p));
  if (found) return { path: found };
  const reason = `no Chromium at ${CANDIDATES.join(", ")}; install it with \`apt-get install -y chromium\` (.ci/run does) or set CHROMIUM_PATH`;
  if (process.env.CI === "true") throw new Error(`CI=true and ${reason}`);
  return { reason };
}

/**
 * Headless, sandbox-free (root in CI), and no background traffic to the
 * closed network. Playwright gives each launch a fresh temporary profile.
 */
export async function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({
    executablePath,
    headless: true,
    // Chromium puts its SingletonSocket under TMPDIR, and a Unix socket path is at most 107 bytes: the tests' nested
    // temp folders (and macOS's /var/folders/… TMPDIR) are longer, and then every launch failed.
    env: { ...process.env, TMPDIR: "/tmp" },
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}
