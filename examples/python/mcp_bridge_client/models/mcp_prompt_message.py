from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.role import Role, check_role

if TYPE_CHECKING:
    from ..models.mcp_prompt_message_content import McpPromptMessageContent


T = TypeVar("T", bound="McpPromptMessage")


@_attrs_define
class McpPromptMessage:
    """MCPPromptMessage: one rendered message of a prompt.

    Attributes:
        role (Role): Who speaks a message, as MCP says (`role`).
        content (McpPromptMessageContent): One MCP content block, exactly as MCP defines it.
    """

    role: Role
    content: McpPromptMessageContent
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        role: str = self.role

        content = self.content.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "role": role,
                "content": content,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.mcp_prompt_message_content import McpPromptMessageContent

        d = dict(src_dict)
        role = check_role(d.pop("role"))

        content = McpPromptMessageContent.from_dict(d.pop("content"))

        mcp_prompt_message = cls(
            role=role,
            content=content,
        )

        mcp_prompt_message.additional_properties = d
        return mcp_prompt_message

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
