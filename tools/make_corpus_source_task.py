#!/usr/bin/python3
"""Builds the corpus-source task (docs/text_tasks.md): which corpus a sentence comes from, PTB news (label `ptb`)
or WikiText-2 encyclopedia (label `wiki`), from the validation and test splits shipped in data/.

Usage: tools/make_corpus_source_task.py [--source DIR] [--out DIR]
Reads DIR/data/ptb/ptb.{valid,test}.txt and DIR/data/wikitext-2/wiki.{valid,test}.tokens (DIR: the repository
root, the default) and writes OUT/{train,valid,test}.tsv (default DIR/data/corpus-source), one example a line:
label TAB text. Deterministic: the same inputs give the same bytes (tests/test_corpus_source_task.py).
Prints counts per split and class, mean lengths, a length-only classifier's accuracy and the leak check.
Standard library only (Debian's /usr/bin/python3)."""
import argparse
import collections
import hashlib
import os
import re
import unicodedata

MIN_TOKENS = 4
MAX_TOKENS = 60          # longer sentences are truncated
SENTENCE_ENDS = {".", "?", "!"}
NUMBER = "N"             # PTB's number placeholder, also used for every number-like token of WikiText
UNK = "<unk>"
SPLITS = ("train", "valid", "test")
LEAK_TOP = 20


def stable_hash(purpose, text):
    """A 64-bit integer from SHA-256 of purpose + text: the same on every machine and Python version."""
    return int.from_bytes(hashlib.sha256((purpose + "\0" + text).encode("utf-8")).digest()[:8], "big")


# ---- reading the corpora ------------------------------------------------------------------------------------

def ptb_sentences(root):
    """PTB: one sentence a line, tokens as they are."""
    for name in ("ptb.valid.txt", "ptb.test.txt"):
        with open(os.path.join(root, "data", "ptb", name), encoding="utf-8") as f:
            for line in f:
                yield line.split()


def is_heading(tokens):
    return len(tokens) >= 2 and tokens[0] == "=" and tokens[-1] == "="


def wiki_sentences(root):
    """WikiText-2: paragraphs (one a line) cut into sentences at ". ", "? ", "! "; headings and empty lines dropped."""
    for name in ("wiki.valid.tokens", "wiki.test.tokens"):
        with open(os.path.join(root, "data", "wikitext-2", name), encoding="utf-8") as f:
            for line in f:
                tokens = line.split()
                if not tokens or is_heading(tokens):
                    continue
                sentence = []
                for t in tokens:
                    if t not in SENTENCE_ENDS:
                        sentence.append(t)
                    elif sentence:
                        yield sentence
                        sentence = []
                if sentence:
                    yield sentence


# ---- normalisation (the same function for both corpora) ----------------------------------------------------

def join_number_parts(tokens):
    """WikiText's "3 @.@ 5" and "20 @,@ 000" become one token ("3.5", "20,000"); "well @-@ known" becomes two
    ("well", "known"), as PTB's "well-known" does after compounds are split (split_compounds)."""
    out = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t in ("@.@", "@,@") and out and i + 1 < len(tokens):
            out[-1] = out[-1] + t[1] + tokens[i + 1]
            i += 2
            continue
        if t != "@-@":
            out.append(t)
        i += 1
    return out


APOSTROPHES = {"'", "\u2019"}
CLITICS = {"s", "t", "re", "ve", "ll", "d", "m"}


def split_contractions(tokens):
    """WikiText's "don 't" / "can 't" become PTB's "do n't" / "ca n't"; its "women ’ s" becomes "women 's"."""
    out = []
    for t in tokens:
        if t.lower() in CLITICS and out and out[-1] in APOSTROPHES:
            out.pop()
            t = "'" + t
        if t == "'t" and out and out[-1].lower().endswith("n") and len(out[-1]) > 1:
            out[-1] = out[-1][:-1]
            t = "n't"
        out.append(t)
    return out


COMPOUND_JOINS = re.compile(r"[-&$/\\]+")


def split_compounds(tokens):
    """PTB's "buy-out", "190-point", "s&p", "us$" and "mgm\\/ua" become "buy out", "190 point", "s p", "us",
    "mgm ua", as WikiText writes them ("well @-@ known", "AT & T", "US $", "km / h") once its joiners and
    punctuation are dropped ("<unk>" has none of these characters)."""
    return [piece for t in tokens for piece in COMPOUND_JOINS.split(t) if piece]


def strip_accents(text):
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def normal_token(t):
    """The token as both corpora write it after normalisation, or None to drop it (punctuation)."""
    if t == UNK:
        return UNK
    if t in (NUMBER, "%") or any(c.isnumeric() for c in t):
        return NUMBER  # PTB writes "10 %" as "N N"
    if UNK in t:
        return UNK     # "<unk>,<unk>" from join_number_parts
    t = strip_accents(t.replace("\u2019", "'")).lower()
    if not any(c.isascii() and c.isalnum() for c in t):
        return None    # punctuation: PTB has none
    if not t.isascii():
        return UNK     # letters outside ASCII: PTB (ASCII only) has no such word
    return t


def normalise(tokens):
    """Lower case, numbers -> N, <unk> kept, punctuation and WikiText's @-@ / @.@ / @,@ joiners dropped,
    contractions as PTB writes them, compounds split, truncated to MAX_TOKENS."""
    tokens = split_compounds(split_contractions(join_number_parts(tokens)))
    out = [n for n in map(normal_token, tokens) if n is not None]
    return out[:MAX_TOKENS]


# ---- the task --------------------------------------------------------------------------------------------------

def normalised_sentences(raw):
    """The distinct normalised sentences of at least MIN_TOKENS tokens, and how many were dropped as short or duplicate."""
    kept, short, duplicate = set(), 0, 0
    for tokens in raw:
        text = " ".join(normalise(tokens))
        if len(text.split()) < MIN_TOKENS:
            short += 1
        elif text in kept:
            duplicate += 1
        else:
            kept.add(text)
    return kept, short, duplicate


def split_of(text):
    """80/10/10 by a stable hash of the normalised sentence: a sentence is in exactly one split."""
    bucket = stable_hash("split", text) % 10
    return "train" if bucket < 8 else "valid" if bucket == 8 else "test"


def build(root):
    """{split: [(label, text)]}, each split balanced (the larger class subsampled by a stable hash) and ordered by a
    stable hash; and the per-class statistics of the cleaning."""
    sentences, stats = {}, {}
    for label, raw in (("ptb", ptb_sentences(root)), ("wiki", wiki_sentences(root))):
        kept, short, duplicate = normalised_sentences(raw)
        sentences[label], stats[label] = kept, {"short": short, "duplicate": duplicate}
    both = sentences["ptb"] & sentences["wiki"]
    for label in sentences:
        sentences[label] -= both  # the same sentence in both corpora has no label
        stats[label].update(in_both=len(both), kept=len(sentences[label]))
    tasks = {}
    for split in SPLITS:
        by_label = {label: sorted((t for t in texts if split_of(t) == split), key=lambda t: stable_hash("balance", t))
                    for label, texts in sentences.items()}
        n = min(len(texts) for texts in by_label.values())
        examples = [(label, t) for label, texts in by_label.items() for t in texts[:n]]
        tasks[split] = sorted(examples, key=lambda e: (stable_hash("order", e[1]), e))
    return tasks, stats


def write(tasks, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for split, examples in tasks.items():
        with open(os.path.join(out_dir, split + ".tsv"), "w", encoding="utf-8", newline="\n") as f:
            for label, text in examples:
                f.write(f"{label}\t{text}\n")


# ---- the report ------------------------------------------------------------------------------------------------

def length_only_accuracy(tasks):
    """Test accuracy of the best rule "length <= L is one class" chosen on train: how much length alone gives away."""
    def accuracy(examples, limit, short_label):
        return sum((len(t.split()) <= limit) == (label == short_label) for label, t in examples) / len(examples)
    best = max((accuracy(tasks["train"], limit, short), limit, short)
               for limit in range(MIN_TOKENS, MAX_TOKENS + 1) for short in ("ptb", "wiki"))
    return best[1], best[2], accuracy(tasks["test"], best[1], best[2])


def token_counts(tasks):
    counts = collections.defaultdict(collections.Counter)
    for examples in tasks.values():
        for label, text in examples:
            counts[label].update(text.split())
    return counts


def report(tasks, stats):
    for label, s in stats.items():
        print(f"{label}: {s['kept']} distinct sentences; dropped {s['short']} shorter than {MIN_TOKENS} tokens, "
              f"{s['duplicate']} duplicates, {s['in_both']} found in both corpora")
    for split, examples in tasks.items():
        per_class = collections.Counter(label for label, _ in examples)
        print(f"{split}: {len(examples)} examples, " + ", ".join(f"{k} {v}" for k, v in sorted(per_class.items())))
    counts = token_counts(tasks)
    for label, c in sorted(counts.items()):
        n = sum(len(t.split()) for examples in tasks.values() for lab, t in examples if lab == label)
        sentences = sum(lab == label for examples in tasks.values() for lab, _ in examples)
        total = sum(c.values())
        print(f"{label}: mean length {n / sentences:.2f} tokens, {len(c)} distinct tokens, "
              f"<unk> {100 * c[UNK] / total:.2f}%, N {100 * c[NUMBER] / total:.2f}% of tokens")
    limit, short, acc = length_only_accuracy(tasks)
    print(f"length only: 'length <= {limit} is {short}' (chosen on train) scores {100 * acc:.1f}% on test (chance 50%)")
    for label, other in (("ptb", "wiki"), ("wiki", "ptb")):
        share = sum(n for t, n in counts[label].items() if counts[other][t] == 0) / sum(counts[label].values())
        print(f"{label}: {100 * share:.1f}% of its tokens are words the {other} sentences never use")
    for label, other in (("ptb", "wiki"), ("wiki", "ptb")):
        only = [(t, n) for t, n in counts[label].most_common() if counts[other][t] == 0][:LEAK_TOP]
        print(f"only in {label} (top {LEAK_TOP} by count): " + " ".join(f"{t}:{n}" for t, n in only))


def main():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", default=here, help="the repository root holding data/ptb and data/wikitext-2")
    parser.add_argument("--out", help="where to write {train,valid,test}.tsv (default SOURCE/data/corpus-source)")
    args = parser.parse_args()
    tasks, stats = build(args.source)
    write(tasks, args.out or os.path.join(args.source, "data", "corpus-source"))
    report(tasks, stats)


if __name__ == "__main__":
    main()
