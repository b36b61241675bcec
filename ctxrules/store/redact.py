"""A store URL as it may be printed: never its password."""

from __future__ import annotations


def shown_url(url: str) -> str:
    """``url`` as it may be printed: a password in it replaced by ``***``; a path as it is.

    >>> shown_url("postgresql://agent:s3cr@t@db.internal/ctx"), shown_url("s.sqlite")
    ('postgresql://agent:***@db.internal/ctx', 's.sqlite')
    """
    scheme, sep, rest = url.partition("://")
    userinfo, at, host = rest.rpartition("@")
    if not sep or not at or ":" not in userinfo:
        return url
    return f"{scheme}://{userinfo.split(':', 1)[0]}:***@{host}"
