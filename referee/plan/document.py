"""The YAML of a configuration read with the line of every key (:class:`Document`), which
collects every mistake as ``file:line: key `k`: ...``, and the typed getters of its values
(:class:`Reader` and the ``is_*`` checks)."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

import yaml
from ohseven.referee.plan.config import ConfigError


class Document:
    """A composed YAML document as plain data plus the line of every key path."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.lines: dict[str, int] = {}
        self._errors: list[tuple[int, str]] = []
        self._collections: set[int] = set()

    @property
    def errors(self) -> list[str]:
        """Every error so far, in the order of the file."""
        return [text for _, text in sorted(self._errors, key=lambda item: item[0])]

    def error(self, path: str, message: str) -> None:
        line = self.line(path)
        where = f"{self.source}:{line}" if line else self.source
        text = f"{where}: key `{path}`: {message}" if path else f"{where}: {message}"
        self._errors.append((line or 0, text))

    def line(self, path: str) -> int | None:
        while path:
            if path in self.lines:
                return self.lines[path]
            cut = max(path.rfind("."), path.rfind("["))
            path = path[:cut] if cut > 0 else ""
        return self.lines.get("")

    def convert(self, node: yaml.Node, path: str) -> Any:
        self.lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode | yaml.SequenceNode):
            # an alias is the same node again: expanding it could grow the document
            # exponentially (a "billion laughs"), so a collection may appear only once
            if id(node) in self._collections:
                self.error(path, "YAML aliases of maps or lists (`*name`) are not supported")
                return None
            self._collections.add(id(node))
        if isinstance(node, yaml.MappingNode):
            result: dict[str, Any] = {}
            for key_node, value_node in node.value:
                key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
                if not isinstance(key, str):
                    self.lines[path + ".?"] = key_node.start_mark.line + 1
                    self.error(path + ".?", "keys must be plain words")
                    continue
                child = f"{path}.{key}" if path else key
                self.lines[child] = key_node.start_mark.line + 1
                if key in result:
                    self.error(child, "given twice")
                    continue
                result[key] = self.convert(value_node, child)
            return result
        if isinstance(node, yaml.SequenceNode):
            items = []
            for index, item in enumerate(node.value):
                child = f"{path}[{index}]"
                self.lines[child] = item.start_mark.line + 1
                items.append(self.convert(item, child))
            return items
        return yaml.SafeLoader.construct_object(_CONSTRUCTOR, node, deep=True)


_CONSTRUCTOR = yaml.SafeLoader("")


class Reader:
    """Reads the sections' values; ``defaults`` keeps the default of every key path it was
    asked for (``rules.passing`` -> False), so that a key written out at its default can be
    told from a change (:func:`~.digests.strip_defaults`)."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.defaults: dict[str, Any] = {}
        self._misspelt: set[str] = set()  # key paths an unknown key resembles

    def keys(self, data: dict, path: str, allowed: tuple[str, ...]) -> None:
        """Report each key of ``data`` not ``allowed``, with the allowed key it resembles (a
        required key so misspelt is not reported missing as well)."""
        for key in data:
            if key not in allowed:
                child = f"{path}.{key}" if path else key
                close = difflib.get_close_matches(key, [k for k in allowed if k not in data], 1)
                meant = f" (did you mean `{close[0]}`?)" if close else ""
                if close:
                    self._misspelt.add(f"{path}.{close[0]}" if path else close[0])
                self.doc.error(child, f"unknown key{meant}; expected one of {', '.join(allowed)}")

    def get(
        self,
        data: dict,
        path: str,
        key: str,
        check: Callable[[Any], object],  # truthy: valid
        expected: str,
        default: Any = None,
        required: bool = False,
    ) -> Any:
        child = f"{path}.{key}" if path else key
        if not required:
            self.defaults[child] = default
        if key not in data or data[key] is None:
            if required and child not in self._misspelt:
                self.doc.error(path, f"missing key `{key}` ({expected})")
            return default
        value = data[key]
        if not check(value):
            self.doc.error(child, f"expected {expected}, not {value!r}")
            return default
        return value


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_pos_int(value: Any) -> bool:
    return is_int(value) and value > 0


def is_pos_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


def is_str(value: Any) -> bool:
    return isinstance(value, str) and value.strip() != ""


def parse(doc: Document, text: str) -> dict:
    """The YAML document as plain data (a mapping at the top), its lines noted in ``doc``."""
    source = doc.source
    try:
        # libyaml's parser when PyYAML has it: a league's thousand bots parse in milliseconds
        node = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error)
        raise ConfigError(source, [f"{source}{line}: not valid YAML: {problem}"]) from None
    if node is None:
        raise ConfigError(source, [f"{source}: the file is empty"])
    data = doc.convert(node, "")
    if not isinstance(data, dict):
        raise ConfigError(source, [f"{source}:1: expected a mapping of keys at the top"])
    return data
