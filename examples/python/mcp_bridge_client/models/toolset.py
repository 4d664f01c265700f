from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.toolset_descriptions import ToolsetDescriptions
    from ..models.toolset_rename import ToolsetRename


T = TypeVar("T", bound="Toolset")


@_attrs_define
class Toolset:
    """A toolset (virtual server): the catalogue tools its globs name, renamed and described as it
    says, served at `/mcp/toolsets/{name}` and as `GET /v1/tools?toolset={name}`.

        Attributes:
            tools (list[str] | None | Unset): Globs on catalogue names (`github__*`, `agent_send`); a tool is in when one
                matches.
            rename (ToolsetRename | Unset): Catalogue name → the name the toolset shows (and is called by).
            descriptions (ToolsetDescriptions | Unset): Catalogue name → the description the toolset shows instead of the
                server's.
            deferred (bool | None | Unset): Show only the meta-tools `search_tools`, `describe_tool` and `call_tool`, so a
                client
                loads only the tools it looks for. Default: False.
    """

    tools: list[str] | None | Unset = UNSET
    rename: ToolsetRename | Unset = UNSET
    descriptions: ToolsetDescriptions | Unset = UNSET
    deferred: bool | None | Unset = False

    def to_dict(self) -> dict[str, Any]:
        tools: list[str] | None | Unset
        if isinstance(self.tools, Unset):
            tools = UNSET
        elif isinstance(self.tools, list):
            tools = self.tools

        else:
            tools = self.tools

        rename: dict[str, Any] | Unset = UNSET
        if not isinstance(self.rename, Unset):
            rename = self.rename.to_dict()

        descriptions: dict[str, Any] | Unset = UNSET
        if not isinstance(self.descriptions, Unset):
            descriptions = self.descriptions.to_dict()

        deferred: bool | None | Unset
        if isinstance(self.deferred, Unset):
            deferred = UNSET
        else:
            deferred = self.deferred

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if tools is not UNSET:
            field_dict["tools"] = tools
        if rename is not UNSET:
            field_dict["rename"] = rename
        if descriptions is not UNSET:
            field_dict["descriptions"] = descriptions
        if deferred is not UNSET:
            field_dict["deferred"] = deferred

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.toolset_descriptions import ToolsetDescriptions
        from ..models.toolset_rename import ToolsetRename

        d = dict(src_dict)

        def _parse_tools(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                tools_type_0 = cast(list[str], data)

                return tools_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        tools = _parse_tools(d.pop("tools", UNSET))

        _rename = d.pop("rename", UNSET)
        rename: ToolsetRename | Unset
        if isinstance(_rename, Unset):
            rename = UNSET
        else:
            rename = ToolsetRename.from_dict(_rename)

        _descriptions = d.pop("descriptions", UNSET)
        descriptions: ToolsetDescriptions | Unset
        if isinstance(_descriptions, Unset):
            descriptions = UNSET
        else:
            descriptions = ToolsetDescriptions.from_dict(_descriptions)

        def _parse_deferred(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        deferred = _parse_deferred(d.pop("deferred", UNSET))

        toolset = cls(
            tools=tools,
            rename=rename,
            descriptions=descriptions,
            deferred=deferred,
        )

        return toolset
