"""analysisref: what the analysis tests (t0210, t0240) share: JSON
comparison that tells 2 from 2.0, the order of group keys, the buckets of
a timeline and the bucket of a time, as the engine defines them
(doc/query-semantics.md), and the usage-error check."""
import tap


def same(a, b):
    """Equal values of equal JSON kinds (2 is not 2.0), keys in order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def keyorder(key):
    """The sort key of a group key: by its UTF-8 bytes (numbers by value),
    null last."""
    return (key is None, key.encode() if isinstance(key, str) else key if key is not None else 0)


def buckets(s, e, w):
    """The bucket starts of [s, e] at width w, and e."""
    n = 1
    while s + n * w < e:
        n += 1
    return [s + i * w for i in range(n)] + [e]


def find(b, x):
    """The bucket of x in the edges b, None outside them."""
    if not (b[0] <= x <= b[-1]):
        return None
    i = 0
    while i + 1 < len(b) - 1 and b[i + 1] <= x:
        i += 1
    return i


def usage_error(t, args, msg, name):
    """dsight query ARGS fails with exit status 2 and exactly msg."""
    r = tap.query(*args)
    t.ok(r.returncode == 2 and tap.err_of(r) == {"ok": False, "error": msg} and r.stdout == "",
         name, "rc=%d stderr=%r" % (r.returncode, r.stderr))
