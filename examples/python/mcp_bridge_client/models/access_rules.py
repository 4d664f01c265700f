from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="AccessRules")


@_attrs_define
class AccessRules:
    """Globs per kind: tools and prompts by namespaced name (`github__*`, `*__delete_*`), resources
    by URI (`file:///srv/*`). `*` matches any run of characters, `?` one.

        Attributes:
            tools (list[str] | None | Unset): Absent: this rule says nothing about tools.
            resources (list[str] | None | Unset):
            prompts (list[str] | None | Unset):
    """

    tools: list[str] | None | Unset = UNSET
    resources: list[str] | None | Unset = UNSET
    prompts: list[str] | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        tools: list[str] | None | Unset
        if isinstance(self.tools, Unset):
            tools = UNSET
        elif isinstance(self.tools, list):
            tools = self.tools

        else:
            tools = self.tools

        resources: list[str] | None | Unset
        if isinstance(self.resources, Unset):
            resources = UNSET
        elif isinstance(self.resources, list):
            resources = self.resources

        else:
            resources = self.resources

        prompts: list[str] | None | Unset
        if isinstance(self.prompts, Unset):
            prompts = UNSET
        elif isinstance(self.prompts, list):
            prompts = self.prompts

        else:
            prompts = self.prompts

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if tools is not UNSET:
            field_dict["tools"] = tools
        if resources is not UNSET:
            field_dict["resources"] = resources
        if prompts is not UNSET:
            field_dict["prompts"] = prompts

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
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

        def _parse_resources(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                resources_type_0 = cast(list[str], data)

                return resources_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        resources = _parse_resources(d.pop("resources", UNSET))

        def _parse_prompts(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                prompts_type_0 = cast(list[str], data)

                return prompts_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        prompts = _parse_prompts(d.pop("prompts", UNSET))

        access_rules = cls(
            tools=tools,
            resources=resources,
            prompts=prompts,
        )

        return access_rules
