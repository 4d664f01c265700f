from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.content_kind import ContentKind, check_content_kind
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.mcp_resource_content_meta_type_0 import McpResourceContentMetaType0


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
        field_meta (McpResourceContentMetaType0 | None | Unset): MCP `_meta`, as the server sent it: an MCP App's HTML
            carries `ui` (`csp`, `permissions`, …) here.
    """

    type_: ContentKind
    uri: str = ""
    mime_type: str = "text/plain"
    text: str = ""
    blob: str = ""
    field_meta: McpResourceContentMetaType0 | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.mcp_resource_content_meta_type_0 import (
            McpResourceContentMetaType0,
        )

        uri = self.uri

        mime_type = self.mime_type

        text = self.text

        blob = self.blob

        type_: str = self.type_

        field_meta: dict[str, Any] | None | Unset
        if isinstance(self.field_meta, Unset):
            field_meta = UNSET
        elif isinstance(self.field_meta, McpResourceContentMetaType0):
            field_meta = self.field_meta.to_dict()
        else:
            field_meta = self.field_meta

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
        if field_meta is not UNSET:
            field_dict["_meta"] = field_meta

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.mcp_resource_content_meta_type_0 import (
            McpResourceContentMetaType0,
        )

        d = dict(src_dict)
        uri = d.pop("uri")

        mime_type = d.pop("mime_type")

        text = d.pop("text")

        blob = d.pop("blob")

        type_ = check_content_kind(d.pop("type"))

        def _parse_field_meta(
            data: object,
        ) -> McpResourceContentMetaType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                field_meta_type_0 = McpResourceContentMetaType0.from_dict(data)

                return field_meta_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(McpResourceContentMetaType0 | None | Unset, data)

        field_meta = _parse_field_meta(d.pop("_meta", UNSET))

        mcp_resource_content = cls(
            uri=uri,
            mime_type=mime_type,
            text=text,
            blob=blob,
            type_=type_,
            field_meta=field_meta,
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
