import pytest

from ctxrules.tokens import ENCODINGS

openai_public = pytest.importorskip("tiktoken_ext.openai_public")

# gpt2 is stored in the two-file data-gym format, which the loader does not read.
UNSUPPORTED = {"gpt2"}


def test_every_single_file_encoding_is_known():
    """Every encoding tiktoken defines, other than gpt2, is one `load_encoding` accepts."""
    assert set(openai_public.ENCODING_CONSTRUCTORS) - UNSUPPORTED == set(ENCODINGS)


@pytest.mark.parametrize("name", sorted(ENCODINGS))
def test_spec_matches_tiktoken(monkeypatch, name):
    """Our copy of each encoding's URL, hash, pattern and special tokens matches tiktoken's."""
    fetched = []

    def record(url, expected_hash=None):
        fetched.append((url, expected_hash))
        return {}

    # tiktoken's constructors would download; record what they ask for instead.
    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", record)
    built = openai_public.ENCODING_CONSTRUCTORS[name]()
    spec = ENCODINGS[name]

    assert fetched == [(spec.url, spec.sha256)]
    assert built["name"] == spec.name
    assert built["pat_str"] == spec.pat_str
    assert built["special_tokens"] == dict(spec.special_tokens)
    assert built.get("explicit_n_vocab") == spec.explicit_n_vocab
