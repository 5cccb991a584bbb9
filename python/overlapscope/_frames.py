"""Columns from the compiled part (python/src/columns.h) as pandas DataFrames."""

from __future__ import annotations

from typing import Any, Mapping

from ._lazy import numpy as np
from ._lazy import pandas as pd


def column(value: Any) -> Any:
    """One column: a numpy array, a list, or a tagged tuple for the types
    numpy has no spelling for (nullable integers and bools, categoricals)."""
    if isinstance(value, tuple):
        tag = value[0]
        if tag == "nullable":
            return pd.arrays.IntegerArray(np.asarray(value[1], dtype=np.int64), np.asarray(value[2], dtype=bool))
        if tag == "nullable_bool":
            return pd.arrays.BooleanArray(np.asarray(value[1], dtype=bool), np.asarray(value[2], dtype=bool))
        if tag == "category":
            codes, categories = value[1], value[2]
            if len(set(categories)) == len(categories):
                return pd.Categorical.from_codes(codes, categories=categories)
            # Two broken names can decode to the same text: plain strings then.
            return np.asarray(categories, dtype=object)[codes] if len(codes) else np.array([], dtype=object)
        raise ValueError(f"unknown column tag {tag!r}")
    return value


def frame(columns: Mapping[str, Any]) -> pd.DataFrame:
    """A DataFrame with the columns in the order they were made."""
    data = {name: column(value) for name, value in columns.items()}
    if not data:
        return pd.DataFrame()
    return pd.DataFrame(data, copy=False)


def _flat(prefix: str, value: Any, out: dict) -> None:
    """A JSON object's fields as ``prefix_field`` (nested objects joined the
    same way); lists stay one value."""
    for key, item in value.items():
        if isinstance(item, dict):
            _flat(f"{prefix}_{key}", item, out)
        else:
            out[f"{prefix}_{key}"] = item


def typed(values: list, like: Any = None) -> Any:
    """A column of JSON values: integers with nulls as pandas' Int64, numbers
    as float64 (NaN for null), booleans as pandas' boolean, the rest
    (text, lists) as objects with None. ``like``: a value of the field's
    type, for a column of nulls only."""
    present = [v for v in values if v is not None] or ([] if like is None else [like])
    if present and all(isinstance(v, bool) for v in present):
        return pd.array(values, dtype="boolean")
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pd.array(values, dtype="Int64")
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return np.array([np.nan if v is None else float(v) for v in values], dtype=float)
    return pd.Series(values, dtype=object).array


def flatten_json_column(table: pd.DataFrame, name: str, template: str) -> pd.DataFrame:
    """Replaces the column ``name`` (JSON text of an object per row, "null"
    when absent) by one column per field, ``name_field``, where it stood;
    ``template`` is the object with every field (each a value of its type),
    for rows (or tables) where it is null."""
    import json

    fields: dict = {}
    _flat(name, json.loads(template), fields)
    rows = []
    for text in table[name]:
        row = dict.fromkeys(fields)
        value = json.loads(text)
        if value is not None:
            _flat(name, value, row)
        rows.append(row)
    at = list(table.columns).index(name)
    columns = {key: typed([row[key] for row in rows], fields[key]) for key in fields}
    left, right = table.iloc[:, :at], table.iloc[:, at + 1 :]
    middle = pd.DataFrame(columns, index=table.index) if len(table) else pd.DataFrame({k: [] for k in fields})
    return pd.concat([left, middle, right], axis=1)


def flat(prefix: str, value: dict) -> dict:
    """A JSON object's fields, nested objects flattened as ``parent_field``
    (with ``prefix_`` in front when ``prefix`` is given)."""
    out: dict = {}
    if prefix:
        _flat(prefix, value, out)
    else:
        for key, item in value.items():
            if isinstance(item, dict):
                _flat(key, item, out)
            else:
                out[key] = item
    return out


def records(rows: list, columns: Any = None) -> pd.DataFrame:
    """A DataFrame of JSON records (dicts), a column per key in the order
    first seen (or ``columns``), each typed as :func:`typed` says: a JSON
    null is <NA> or NaN, as in the report tables."""
    keys: dict = dict.fromkeys(columns or [])
    if columns is None:
        for row in rows:
            keys.update(dict.fromkeys(row))
    return pd.DataFrame({key: typed([row.get(key) for row in rows]) for key in keys})


class Document:
    """A command's JSON document and its text, as the command line writes
    them (what-if, diff, hang): ``to_dict()``, ``text()``; tables are made
    from the document by the subclasses."""

    def __init__(self, document: Any, text: str) -> None:
        self._document = document
        self._text = text

    def to_dict(self) -> Any:
        """The command's ``--format json`` document."""
        return self._document

    def text(self) -> str:
        """The command's text output."""
        return self._text

    def __repr__(self) -> str:
        return self._text
