from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.mcp_prompt_argument import McpPromptArgument


T = TypeVar("T", bound="McpPrompt")


@_attrs_define
class McpPrompt:
    """MCPPrompt: a prompt template a server offers.

    Attributes:
        name (str):  Default: ''.
        description (str):  Default: ''.
        server_id (str):  Default: ''.
        arguments (list[McpPromptArgument]):
    """

    arguments: list[McpPromptArgument]
    name: str = ""
    description: str = ""
    server_id: str = ""
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        description = self.description

        server_id = self.server_id

        arguments = []
        for arguments_item_data in self.arguments:
            arguments_item = arguments_item_data.to_dict()
            arguments.append(arguments_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "description": description,
                "server_id": server_id,
                "arguments": arguments,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.mcp_prompt_argument import McpPromptArgument

        d = dict(src_dict)
        name = d.pop("name")

        description = d.pop("description")

        server_id = d.pop("server_id")

        arguments = []
        _arguments = d.pop("arguments")
        for arguments_item_data in _arguments:
            arguments_item = McpPromptArgument.from_dict(arguments_item_data)

            arguments.append(arguments_item)

        mcp_prompt = cls(
            name=name,
            description=description,
            server_id=server_id,
            arguments=arguments,
        )

        mcp_prompt.additional_properties = d
        return mcp_prompt

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
