from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.mcp_resource_annotations import McpResourceAnnotations
    from ..models.mcp_resource_meta_type_0 import McpResourceMetaType0


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
        field_meta (McpResourceMetaType0 | None | Unset): MCP `_meta`, as the server sent it (for MCP Apps: `ui` with
            `csp`, `permissions`, …).
    """

    annotations: McpResourceAnnotations
    uri: str = ""
    name: str = ""
    description: str = ""
    mime_type: str = ""
    server_id: str = ""
    field_meta: McpResourceMetaType0 | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.mcp_resource_meta_type_0 import McpResourceMetaType0

        uri = self.uri

        name = self.name

        description = self.description

        mime_type = self.mime_type

        server_id = self.server_id

        annotations = self.annotations.to_dict()

        field_meta: dict[str, Any] | None | Unset
        if isinstance(self.field_meta, Unset):
            field_meta = UNSET
        elif isinstance(self.field_meta, McpResourceMetaType0):
            field_meta = self.field_meta.to_dict()
        else:
            field_meta = self.field_meta

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
        if field_meta is not UNSET:
            field_dict["_meta"] = field_meta

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.mcp_resource_annotations import McpResourceAnnotations
        from ..models.mcp_resource_meta_type_0 import McpResourceMetaType0

        d = dict(src_dict)
        uri = d.pop("uri")

        name = d.pop("name")

        description = d.pop("description")

        mime_type = d.pop("mime_type")

        server_id = d.pop("server_id")

        annotations = McpResourceAnnotations.from_dict(d.pop("annotations"))

        def _parse_field_meta(data: object) -> McpResourceMetaType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                field_meta_type_0 = McpResourceMetaType0.from_dict(data)

                return field_meta_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(McpResourceMetaType0 | None | Unset, data)

        field_meta = _parse_field_meta(d.pop("_meta", UNSET))

        mcp_resource = cls(
            uri=uri,
            name=name,
            description=description,
            mime_type=mime_type,
            server_id=server_id,
            annotations=annotations,
            field_meta=field_meta,
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
