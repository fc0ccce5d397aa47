"""MkDocs hooks for the diffkit site (``hooks:`` in mkdocs.yml).

The docstrings are written for reading in the source, with a little reStructuredText that
Markdown does not know: Sphinx roles (``:func:`check_grads```), which would show the role's
name in front of the code, and ``::`` introducing a code example, which would show as a
paragraph of its own. Drop both from the rendered pages; the code stays.
"""

import re

_SPHINX_ROLE = re.compile(r":(?:func|class|mod|meth|attr|data|exc|obj):(?=<code>)")
_LITERAL_MARKER = re.compile(r"<p>::</p>\s*")
_TRAILING_MARKER = re.compile(r"(\S)::</p>")


def on_page_content(html, page, config, files):
    html = _SPHINX_ROLE.sub("", html)
    html = _LITERAL_MARKER.sub("", html)
    return _TRAILING_MARKER.sub(r"\1:</p>", html)
