# distutils: language = c++
# cython: language_level=3
"""The vertex and hyperedge lines of forest files (format: dparse/hypergraph/forest_io.py),
formatted and parsed in C.

Scores are written as Python's ``repr`` (the shortest string that reads back as the same
double, ``PyOS_double_to_string`` with format 'r') and read with C's ``strtod``, which rounds
correctly, so a score survives a round trip bit for bit. The parser is strict and silent: on
anything unexpected it returns None and forest_io finds and names the bad line.
"""

from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport strtod
from libcpp.string cimport string

import numpy as np

cdef extern from "Python.h":
    char* PyOS_double_to_string(double val, char format_code, int precision, int flags,
                                int* ptype) except NULL
    int Py_DTSF_ADD_DOT_0
    void PyMem_Free(void* p)


cdef inline void put_int(string& out, int64_t x) noexcept nogil:
    """Appends a space and the decimal digits of x."""
    cdef char buf[24]
    cdef int i = 23
    cdef bint negative = x < 0
    cdef unsigned long long u = <unsigned long long>(-x) if negative else <unsigned long long>x
    buf[i] = 0
    while True:
        i -= 1
        buf[i] = <char>(48 + u % 10)
        u //= 10
        if u == 0:
            break
    if negative:
        i -= 1
        buf[i] = 45  # '-'
    i -= 1
    buf[i] = 32  # ' '
    out.append(&buf[i])


cdef inline void put_score(string& out, double x) except *:
    """Appends a space and repr(x)."""
    cdef char* text = PyOS_double_to_string(x, b'r', 0, Py_DTSF_ADD_DOT_0, NULL)
    out.push_back(b' ')
    out.append(text)
    PyMem_Free(text)


def format_vertices(const int32_t[:, ::1] span, const int32_t[::1] head) -> str:
    """``v FIRST LAST HEAD`` lines, one per vertex, each ending in a newline."""
    cdef string out
    cdef Py_ssize_t v
    out.reserve(16 * head.shape[0])
    for v in range(head.shape[0]):
        out.push_back(b'v')
        put_int(out, span[v, 0])
        put_int(out, span[v, 1])
        put_int(out, head[v])
        out.push_back(b'\n')
    return out.decode("ascii")


def format_edges(const int32_t[::1] head, const int32_t[:, ::1] tails,
                 const int32_t[:, ::1] arc, label, const double[::1] score) -> str:
    """``e VERTEX TAIL0 TAIL1 ARCHEAD ARCMOD [LABEL] SCORE`` lines, one per hyperedge (LABEL
    when ``label``, int32 [E], is not None), each ending in a newline."""
    cdef string out
    cdef Py_ssize_t e
    cdef const int32_t[::1] labels
    cdef bint labeled = label is not None
    if labeled:
        labels = label
    out.reserve(40 * head.shape[0])
    for e in range(head.shape[0]):
        out.push_back(b'e')
        put_int(out, head[e])
        put_int(out, tails[e, 0])
        put_int(out, tails[e, 1])
        put_int(out, arc[e, 0])
        put_int(out, arc[e, 1])
        if labeled:
            put_int(out, labels[e])
        put_score(out, score[e])
        out.push_back(b'\n')
    return out.decode("ascii")


cdef inline bint is_blank(char c) noexcept nogil:
    return c == 32 or c == 9  # ' ' or '\t'


cdef int parse_c(const char* p, const char* end, Py_ssize_t count, char kind, int n_ints,
                 bint has_score, int32_t* ints, double* scores) noexcept nogil:
    """Parses ``count`` lines of ``kind`` followed by n_ints integers (int32) and, with
    has_score, one float; fields separated by blanks, lines by newlines (optional carriage
    return before), the last newline optional. Returns 0, or -1 if the text does not match."""
    cdef Py_ssize_t r
    cdef int c, digits
    cdef int64_t value
    cdef bint negative
    cdef char* after
    for r in range(count):
        if p >= end or p[0] != kind:
            return -1
        p += 1
        for c in range(n_ints):
            if p >= end or not is_blank(p[0]):
                return -1
            while p < end and is_blank(p[0]):
                p += 1
            negative = p < end and p[0] == 45  # '-'
            if negative:
                p += 1
            value = 0
            digits = 0
            while p < end and 48 <= p[0] <= 57 and digits < 12:
                value = value * 10 + (p[0] - 48)
                digits += 1
                p += 1
            if negative:
                value = -value
            if digits == 0 or digits == 12 or not -2147483648 <= value <= 2147483647:
                return -1
            ints[r * n_ints + c] = <int32_t>value
        if has_score:
            if p >= end or not is_blank(p[0]):
                return -1
            while p < end and is_blank(p[0]):
                p += 1
            if p >= end or p[0] == 10 or p[0] == 13 or is_blank(p[0]):
                return -1
            scores[r] = strtod(p, &after)
            if after == p or after > end:
                return -1
            p = after
        while p < end and is_blank(p[0]):
            p += 1
        if p < end and p[0] == 13:  # '\r'
            p += 1
        if p < end:
            if p[0] != 10:  # '\n'
                return -1
            p += 1
    return 0 if p == end else -1


def parse_lines(str text, Py_ssize_t count, str kind, int n_ints, bint has_score):
    """The ``count`` lines of ``text`` as (int32 [count, n_ints], float64 [count] or None),
    or None if the text is not exactly such lines."""
    try:
        data = text.encode("ascii")
    except UnicodeEncodeError:
        return None
    cdef const char* p = data
    cdef Py_ssize_t size = len(data)
    cdef int32_t[:, ::1] ints = np.empty((count, n_ints), dtype=np.int32)
    out_scores = np.empty(max(count, 1), dtype=np.float64)
    cdef double[::1] scores = out_scores
    cdef char k = ord(kind)
    cdef int status
    cdef int32_t dummy = 0
    with nogil:
        status = parse_c(p, p + size, count, k, n_ints, has_score,
                         &ints[0, 0] if count and n_ints else &dummy, &scores[0])
    if status != 0:
        return None
    return np.asarray(ints), (out_scores[:count] if has_score else None)
