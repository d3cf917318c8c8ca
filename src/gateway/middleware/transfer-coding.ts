import type { IncomingMessage } from "node:http";
import { HttpError } from "../http/http-error.js";

/**
 * A request body's only transfer coding the gateway passes on is `chunked`.
 * Node's parser accepts `Transfer-Encoding: gzip, chunked` and hands over the
 * body with the chunked coding removed and the gzip coding still on it; the
 * upstream leg frames the body itself (chunked), so the gzip coding would be
 * lost and the upstream would read compressed bytes as the body. RFC 9112
 * §6.1 answers a transfer coding a server does not understand with 501; the
 * connection is closed because the body was not read.
 *
 * HTTP/1.0 has no transfer codings: an HTTP/1.0 message with
 * Transfer-Encoding has faulty framing (RFC 9112 §6.1), and a front proxy
 * speaking HTTP/1.0 reads its chunked bytes as the next request. Node
 * decodes it as chunked all the same, so it is refused with 400 and the
 * connection closed, whatever else the request says.
 */
export function checkTransferCoding(req: IncomingMessage): void {
  const value = req.headers["transfer-encoding"];
  if (value === undefined) return;
  if (req.httpVersionMajor === 1 && req.httpVersionMinor === 0) throw transferCodingInHttp10();
  const codings = value.split(",").map((t) => t.trim().toLowerCase()).filter((t) => t !== "");
  if (codings.length === 1 && codings[0] === "chunked") return;
  if (codings.length === 0) {
    throw new HttpError(400, "invalid_request", "the Transfer-Encoding header is empty; send the body with Transfer-Encoding: chunked or with Content-Length", { connection: "close" });
  }
  const others = codings.filter((t) => t !== "chunked");
  const named = others.length > 0 ? `the transfer coding ${others.join(", ")} is` : "a repeated chunked coding is";
  throw new HttpError(501, "invalid_request", `${named} not supported; send the body with Transfer-Encoding: chunked alone or with Content-Length (a Content-Encoding header carries compression)`, { connection: "close" });
}

function transferCodingInHttp10(): HttpError {
  return new HttpError(
    400,
    "invalid_request",
    "an HTTP/1.0 request must not carry Transfer-Encoding (HTTP/1.0 has no chunked framing, so the body's end is ambiguous); send it as HTTP/1.1, or send HTTP/1.0 with Content-Length alone",
    { connection: "close" },
  );
}
