# Independent Sparkle tree hash (SUBinaryDeltaCommon's getRawHashOfTree) in Python:
# fts physical walk, siblings in strcmp order, folder before children.
import hashlib, os, stat, struct, sys

def tree_hash(root):
    h = hashlib.sha1()
    root_b = os.fsencode(root)
    def visit(abs_b, rel_b):
        for name in sorted(os.listdir(abs_b)):
            a = os.path.join(abs_b, name)
            r = rel_b + b"/" + name
            st = os.lstat(a)
            if stat.S_ISLNK(st.st_mode):
                content, kind, perms = hashlib.sha1(os.readlink(a)).digest(), 12, 0o755
            elif stat.S_ISDIR(st.st_mode):
                content, kind, perms = b"\xdd" * 20, 1, st.st_mode & 0o7777
            elif stat.S_ISREG(st.st_mode):
                with open(a, "rb") as f:
                    content = hashlib.sha1(f.read()).digest()
                kind, perms = 8, st.st_mode & 0o7777
            else:
                continue
            if r != b"/Icon\r":
                h.update(content + r + struct.pack("<HH", kind, perms))
            if kind == 1:
                visit(a, r)
    visit(root_b, b"")
    return h.hexdigest()

print(tree_hash(sys.argv[1]))
