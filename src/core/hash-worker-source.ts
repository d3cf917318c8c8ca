/**
 * The code of a hash worker (see hash-pool.ts), as source rather than a file
 * beside it: the same module then runs from dist/ and from src/ under the
 * test runner, which has no compiled worker file to point at.
 *
 * Streams come in chunks ("start", "data", "end"); a whole file comes as a
 * descriptor the caller keeps open ("file"), read by position here, kept
 * (moved back, not copied) when asked. An Ed25519 signature is checked here
 * by OpenSSL over the file held in memory: its bytes are read once and never
 * cross to another thread for it (2 MiB zips by the hundred, moved to the
 * main thread, cost it more in garbage collection than the hashing did).
 */
/** DER of an Ed25519 SubjectPublicKeyInfo up to the 32 key bytes (RFC 8410): how OpenSSL takes a raw public key. */
const SPKI_ED25519_PREFIX_HEX = "302a300506032b6570032100";

export const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
const { createHash, createPublicKey, verify } = require("node:crypto");
const { readSync } = require("node:fs");
const jobs = new Map();
let scratch;
let held;
let lastKey;
// An Ed25519 signature checked by OpenSSL over the body this worker just read (the body never crosses threads for it).
function signatureHolds(ed, body) {
  if (ed.publicKey.length !== 32 || ed.signature.length !== 64) return false;
  const raw = Buffer.from(ed.publicKey);
  if (!lastKey || !lastKey.raw.equals(raw)) {
    let key;
    try {
      key = createPublicKey({ key: Buffer.concat([Buffer.from(${JSON.stringify(SPKI_ED25519_PREFIX_HEX)}, "hex"), raw]), format: "der", type: "spki" });
    } catch {
      key = undefined;
    }
    lastKey = { raw, key };
  }
  if (!lastKey.key) return false;
  try {
    return verify(null, body, lastKey.key, Buffer.from(ed.signature));
  } catch {
    return false;
  }
}
// A whole file by its descriptor (kept open by the caller until "done"). Read into one buffer when it is kept (a new one
// of its size, moved back) or has a signature to check that fits m.inMemoryBytes (this worker's own, grown as needed,
// never sent); else through a reused 1 MiB one. A signature not checked over the whole file gets its challenge hash.
function hashFile(m) {
  const sha256 = createHash("sha256");
  const whole = m.keep || (m.ed25519 !== undefined && m.size <= m.inMemoryBytes);
  let size = 0;
  let body;
  if (whole) {
    if (m.keep) body = Buffer.allocUnsafeSlow(m.size);
    else {
      if (!held || held.length < m.size) held = Buffer.allocUnsafeSlow(m.size);
      body = held.subarray(0, m.size);
    }
    for (let n = 1; size < m.size && n > 0; size += n) n = readSync(m.fd, body, size, m.size - size, size);
    if (size < m.size) body = body.subarray(0, size);
    sha256.update(body);
  }
  const challenge = () => createHash("sha512").update(Buffer.from(m.ed25519.signature).subarray(0, 32)).update(Buffer.from(m.ed25519.publicKey));
  let sha512 = m.ed25519 && !whole ? challenge() : undefined;
  scratch ??= Buffer.allocUnsafeSlow(1 << 20);
  for (let n = readSync(m.fd, scratch, 0, scratch.length, size); n > 0; n = readSync(m.fd, scratch, 0, scratch.length, size)) {
    // The file grew after it was sized: the bytes in memory are not all of it, so the signature goes by its challenge.
    if (body && m.ed25519) sha512 = challenge().update(body);
    body = undefined;
    const bytes = scratch.subarray(0, n);
    sha256.update(bytes);
    if (sha512) sha512.update(bytes);
    size += n;
  }
  const done = { id: m.id, op: "done", sha256: sha256.digest("hex"), size, sha512: sha512 ? sha512.digest() : undefined };
  if (body && m.ed25519) done.signatureValid = signatureHolds(m.ed25519, body);
  if (body && m.keep) parentPort.postMessage({ ...done, body: body.buffer, bodyLength: body.length }, [body.buffer]);
  else parentPort.postMessage(done);
}
parentPort.on("message", (m) => {
  if (m.op === "file") {
    try {
      hashFile(m);
    } catch (err) {
      parentPort.postMessage({ id: m.id, op: "failed", message: String(err && err.message || err) });
    }
  } else if (m.op === "start") {
    const job = { sha256: createHash("sha256") };
    if (m.sha512Prefix) job.sha512 = createHash("sha512").update(Buffer.from(m.sha512Prefix));
    jobs.set(m.id, job);
  } else if (m.op === "data") {
    const job = jobs.get(m.id);
    const bytes = Buffer.from(m.bytes, m.offset, m.length);
    job.sha256.update(bytes);
    if (job.sha512) job.sha512.update(bytes);
    parentPort.postMessage({ id: m.id, op: "ack", length: m.length });
  } else if (m.op === "end") {
    const job = jobs.get(m.id);
    jobs.delete(m.id);
    parentPort.postMessage({ id: m.id, op: "done", sha256: job.sha256.digest("hex"), sha512: job.sha512 ? job.sha512.digest() : undefined });
  } else if (m.op === "drop") {
    jobs.delete(m.id);
  }
});
`;
