import type { Command } from "commander";
import { RelcastError } from "../../core/errors.js";
import { maskSecrets } from "../../core/secrets.js";
import { parseClockOption, parseHeaderLines, parseMethodOption, readBodyFile, readSecretFile } from "../../hmac/cli-input.js";
import { resolveRequestTarget } from "../../hmac/request-target.js";
import { signRequest } from "../../hmac/sign-request.js";
import { formatVerifyReport } from "../../hmac/verify-report.js";
import { verifyRequest } from "../../hmac/verify-request.js";

type SignOptions = { clientId: string; secretFile: string; method: string; url: string; bodyFile?: string; date?: string; showSigningString?: boolean };
type VerifyOptions = {
  secretFile: string; method: string; url: string; header: string[]; bodyFile?: string; now?: string;
  clientId?: string; allowDeprecatedRequestLine?: boolean; maxSkew: string;
};

const out = (line: string) => process.stdout.write(maskSecrets(line) + "\n");
const note = (line: string) => process.stderr.write(maskSecrets(line) + "\n");

/** `relcast hmac sign` and `relcast hmac verify`: the signer and the validator of spec §5.2. */
export function registerHmac(program: Command): void {
  const hmac = program.command("hmac").description("Sign and verify HMAC-SHA256 gateway requests");

  hmac
    .command("sign")
    .description("print the Date, Digest and Authorization headers for a request, one 'Name: value' per line")
    .requiredOption("--client-id <id>", "CLIENT_ID of the HMAC credential")
    .requiredOption("--secret-file <file>", "file holding the CLIENT_SECRET (one trailing newline is ignored)")
    .requiredOption("--method <method>", "HTTP method, e.g. GET or POST")
    .requiredOption("--url <path?query>", "path and query exactly as sent (or an absolute http(s) URL)")
    .option("--body-file <file>", "file with the exact body bytes")
    .option("--date <http-date>", "Date header value to sign (IMF-fixdate); default now")
    .option("--show-signing-string", "also print the signing string to stderr")
    .action(async (o: SignOptions) => {
      const secret = await readSecretFile(o.secretFile);
      const body = o.bodyFile === undefined ? undefined : await readBodyFile(o.bodyFile);
      const signed = signRequest({
        clientId: o.clientId, secret, method: parseMethodOption(o.method), url: o.url,
        ...(body === undefined ? {} : { body }), ...(o.date === undefined ? {} : { date: o.date }),
      });
      if (signed.rewrittenFrom !== undefined) {
        note(`note: fetch sends ${JSON.stringify(signed.rewrittenFrom)} as ${JSON.stringify(signed.requestTarget)}; signed the latter`);
      }
      for (const [name, value] of Object.entries(signed.headers)) out(`${name}: ${value}`);
      if (o.showSigningString) note(`signing string: ${JSON.stringify(signed.signingString)}`);
    });

  hmac
    .command("verify")
    .description("check a signed request; exit 0 with 'valid' or exit 1 naming the failing check")
    .requiredOption("--secret-file <file>", "file holding the CLIENT_SECRET")
    .requiredOption("--method <method>", "HTTP method of the request")
    .requiredOption("--url <path?query>", "path and query exactly as sent")
    .option("--header <Name: value>", "a request header (repeat for Authorization, Date, Digest)", collect, [])
    .option("--body-file <file>", "file with the exact body bytes received")
    .option("--now <http-date>", "the verifier's clock (IMF-fixdate); default now")
    .option("--client-id <id>", "only accept this username")
    .option("--allow-deprecated-request-line", "accept signatures over the request-line without the query string")
    .option("--max-skew <seconds>", "allowed Date skew, exclusive", "300")
    .action(async (o: VerifyOptions) => {
      const secret = await readSecretFile(o.secretFile);
      const target = resolveRequestTarget(o.url);
      if (!target.ok) throw new RelcastError("E_USAGE", `--url: ${target.message}`);
      const maxSkewSeconds = Number(o.maxSkew);
      if (!Number.isFinite(maxSkewSeconds) || maxSkewSeconds <= 0) throw new RelcastError("E_USAGE", `--max-skew ${JSON.stringify(o.maxSkew)} is not a positive number`);
      const body = o.bodyFile === undefined ? undefined : await readBodyFile(o.bodyFile);
      const result = await verifyRequest({
        method: parseMethodOption(o.method),
        requestTarget: target.value.target,
        headers: parseHeaderLines(o.header),
        ...(body === undefined ? {} : { body }),
        lookupSecret: (id) => (o.clientId === undefined || id === o.clientId ? secret : undefined),
        now: o.now === undefined ? new Date() : parseClockOption(o.now, "--now"),
        allowDeprecatedRequestLine: o.allowDeprecatedRequestLine ?? false,
        maxSkewSeconds,
      });
      for (const line of formatVerifyReport(result)) out(line);
      if (result.ok && result.deprecatedRequestLine) note("warning: the signature uses the deprecated request-line without the query string");
      if (!result.ok) process.exitCode = 1;
    });
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
