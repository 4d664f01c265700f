from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.content_kind import ContentKind, check_content_kind

T = TypeVar("T", bound="McpResourceContent")


@_attrs_define
class McpResourceContent:
    """MCPResourceContent: one block of a resource's contents.

    Attributes:
        uri (str):  Default: ''.
        mime_type (str):  Default: 'text/plain'.
        text (str):  Default: ''.
        blob (str): Base64-encoded binary content. Default: ''.
        type_ (ContentKind): The kind of a resource content block (`type` of MCPResourceContent).
    """

    type_: ContentKind
    uri: str = ""
    mime_type: str = "text/plain"
    text: str = ""
    blob: str = ""
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        uri = self.uri

        mime_type = self.mime_type

        text = self.text

        blob = self.blob

        type_: str = self.type_

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "uri": uri,
                "mime_type": mime_type,
                "text": text,
                "blob": blob,
                "type": type_,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        uri = d.pop("uri")

        mime_type = d.pop("mime_type")

        text = d.pop("text")

        blob = d.pop("blob")

        type_ = check_content_kind(d.pop("type"))

        mcp_resource_content = cls(
            uri=uri,
            mime_type=mime_type,
            text=text,
            blob=blob,
            type_=type_,
        )

        mcp_resource_content.additional_properties = d
        return mcp_resource_content

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
