"""Each tool's input and output JSON schemas, and the file that keeps them between processes.

pydantic takes ~2 ms to build the JSON schema of a model; a stdio server registering 18 tools spent
~80 ms of its start-up on schemas that only change with the code. `tool_schemas.json` beside this
module holds them for every tool, under a fingerprint of the source files they are made from. A file
whose fingerprint does not match is ignored (the schemas are built live, as before), so a stale file
costs time, never correctness; the test suite checks that the committed file is current.

    python -m ralph_desk.mcp_server.schemas      # rewrites tool_schemas.json
"""

from __future__ import annotations

import hashlib
import json
import logging
from functools import cache
from pathlib import Path
from typing import Any

from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from pydantic import BaseModel, ConfigDict

import ralph_desk
from ralph_desk.domain.tools import REGISTRY, ToolSpec
from ralph_desk.mcp_server import handlers as handler_modules

log = logging.getLogger("ralph_desk.mcp")

SCHEMA_FILE = Path(__file__).with_name("tool_schemas.json")
PACKAGE_DIR = Path(ralph_desk.__file__).parent
# The modules the schemas are made from: the input models with their enums and records, the result
# models, the handlers (which result model each tool returns) and this module (how schemas are made).
SOURCES = (
    "domain/tools.py",
    "domain/enums.py",
    "domain/records.py",
    "mcp_server/results.py",
    "mcp_server/schemas.py",
    *(f"mcp_server/handlers/{module}.py" for module in ("__init__", *handler_modules.MODULES)),
)

Schema = dict[str, Any]


class RegistryArguments(ArgModelBase):
    """The arguments as sent, for the SDK to hand on: `SessionGate` and the tool validate them.

    The registry's input model is the one schema and the one validator of a tool's arguments. Letting
    the SDK derive a second model from a signature cost ~3 ms per tool at start-up, and its JSON
    pre-parsing of text arguments turned a description reading `null` or `[0]` into that value.
    """

    model_config = ConfigDict(extra="allow")

    def model_dump_one_level(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


def input_schema(spec: ToolSpec) -> Schema:
    """The JSON schema of a tool's arguments, from the registry's input model."""
    return spec.input_model.model_json_schema(by_alias=True)


def output_schema(result_model: type[BaseModel]) -> Schema:
    """The output schema the SDK derives for a tool returning `result_model`."""
    derived = FuncMetadata(arg_model=RegistryArguments, output_model=result_model).output_schema
    assert derived is not None
    return derived


def fingerprint() -> str | None:
    """The sources the schemas are made from, hashed; None where they cannot be read.

    Not the pydantic or SDK version: a new release of either leaves these schemas as they were (CI
    installs the newest and the test comparing the kept schemas with fresh ones says when it does not).
    """
    digest = hashlib.sha256(ralph_desk.__version__.encode())
    for source in SOURCES:
        try:
            digest.update((PACKAGE_DIR / source).read_bytes())
        except OSError:
            return None
    return digest.hexdigest()


def generate(result_models: dict[str, type[BaseModel]]) -> dict[str, Any]:
    """The file's content: the fingerprint and every tool's input and output schema."""
    return {
        "fingerprint": fingerprint(),
        "tools": {
            name: {"input": input_schema(REGISTRY[name]), "output": output_schema(model)}
            for name, model in sorted(result_models.items())
        },
    }


@cache
def stored() -> dict[str, Schema]:
    """The tools' schemas from `tool_schemas.json`, by tool name; empty when the file is absent or stale."""
    try:
        content = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    current = fingerprint()
    if current is None or content.get("fingerprint") != current:
        log.debug("%s is stale: building the tool schemas live", SCHEMA_FILE.name)
        return {}
    tools: dict[str, Schema] = content.get("tools", {})
    return tools


def schemas_of(spec: ToolSpec, result_model: type[BaseModel]) -> tuple[Schema, Schema]:
    """A tool's input and output schemas: kept ones when current, else built now."""
    kept = stored().get(spec.name)
    if kept is not None:
        return kept["input"], kept["output"]
    return input_schema(spec), output_schema(result_model)


def main() -> None:
    """Rewrite `tool_schemas.json` from the registry and the handlers' result models."""
    from ralph_desk.mcp_server.binding import HANDLERS

    handler_modules.load()
    content = generate({name: bound.result_model for name, bound in HANDLERS.items()})
    SCHEMA_FILE.write_text(json.dumps(content, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote the schemas of {len(content['tools'])} tools to {SCHEMA_FILE}")


if __name__ == "__main__":
    main()
