# Independent reader of a Sparkle delta's container header (SPUSparkleDeltaArchive):
# prints compression, metadata byte, version and both tree hashes as JSON.
import bz2, json, lzma, struct, sys, zlib

data = open(sys.argv[1], "rb").read()
assert data[:4] == b"spk!", "magic"
compression, metadata = data[4], data[5]
body = data[6:]
if compression == 2:
    d = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
    body = d.decompress(body)
    assert d.eof and d.unused_data == b"", "one complete xz stream"
elif compression == 1:
    d = bz2.BZ2Decompressor()
    body = d.decompress(body)
    assert d.eof and d.unused_data == b"", "one complete bzip2 stream"
elif compression == 5:
    # Apple's COMPRESSION_ZLIB, which Sparkle reads this mode with, is raw DEFLATE (RFC 1951): no zlib header, no checksum.
    d = zlib.decompressobj(wbits=-15)
    body = d.decompress(body)
    assert d.eof and d.unused_data == b"", "one complete raw DEFLATE stream"
else:
    assert compression == 0
major, minor = struct.unpack_from("<HH", body, 0)
before, after = body[4:24].hex(), body[24:44].hex()
(table_len,) = struct.unpack_from("<Q", body, 44)
paths = body[52:52 + table_len].split(b"\0")[:-1]
print(json.dumps({"compression": compression, "metadata": metadata, "major": major, "minor": minor,
                  "before": before, "after": after, "paths": [p.decode() for p in paths]}))
