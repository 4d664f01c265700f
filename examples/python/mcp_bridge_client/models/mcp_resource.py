from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.mcp_resource_annotations import McpResourceAnnotations


T = TypeVar("T", bound="McpResource")


@_attrs_define
class McpResource:
    """MCPResource: a resource a server lists.

    Attributes:
        uri (str):  Default: ''.
        name (str):  Default: ''.
        description (str):  Default: ''.
        mime_type (str):  Default: ''.
        server_id (str):  Default: ''.
        annotations (McpResourceAnnotations): MCP annotations, as MCP defines them.
    """

    annotations: McpResourceAnnotations
    uri: str = ""
    name: str = ""
    description: str = ""
    mime_type: str = ""
    server_id: str = ""
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        uri = self.uri

        name = self.name

        description = self.description

        mime_type = self.mime_type

        server_id = self.server_id

        annotations = self.annotations.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "uri": uri,
                "name": name,
                "description": description,
                "mime_type": mime_type,
                "server_id": server_id,
                "annotations": annotations,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.mcp_resource_annotations import McpResourceAnnotations

        d = dict(src_dict)
        uri = d.pop("uri")

        name = d.pop("name")

        description = d.pop("description")

        mime_type = d.pop("mime_type")

        server_id = d.pop("server_id")

        annotations = McpResourceAnnotations.from_dict(d.pop("annotations"))

        mcp_resource = cls(
            uri=uri,
            name=name,
            description=description,
            mime_type=mime_type,
            server_id=server_id,
            annotations=annotations,
        )

        mcp_resource.additional_properties = d
        return mcp_resource

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
