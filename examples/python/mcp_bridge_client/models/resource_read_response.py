from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.resource_read_response_type import (
    ResourceReadResponseType,
    check_resource_read_response_type,
)

if TYPE_CHECKING:
    from ..models.mcp_resource_content import McpResourceContent


T = TypeVar("T", bound="ResourceReadResponse")


@_attrs_define
class ResourceReadResponse:
    """mcp/resource/read/resp.

    Attributes:
        type_ (ResourceReadResponseType): The A2E message type. Default: 'mcp/resource/read/resp'.
        id (str): Message id; a UUID when absent.
        version (str): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float): Timestamp, seconds since the Unix epoch; now when absent.
        req_id (str): Echoes the request's `id`. Default: ''.
        contents (list[McpResourceContent]):
        server_id (str):  Default: ''.
        error (str):  Default: ''.
    """

    id: str
    ts: float
    contents: list[McpResourceContent]
    type_: ResourceReadResponseType = "mcp/resource/read/resp"
    version: str = "1.0"
    req_id: str = ""
    server_id: str = ""
    error: str = ""
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_: str = self.type_

        id = self.id

        version = self.version

        ts = self.ts

        req_id = self.req_id

        contents = []
        for contents_item_data in self.contents:
            contents_item = contents_item_data.to_dict()
            contents.append(contents_item)

        server_id = self.server_id

        error = self.error

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
                "id": id,
                "version": version,
                "ts": ts,
                "req_id": req_id,
                "contents": contents,
                "server_id": server_id,
                "error": error,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.mcp_resource_content import McpResourceContent

        d = dict(src_dict)
        type_ = check_resource_read_response_type(d.pop("type"))

        id = d.pop("id")

        version = d.pop("version")

        ts = d.pop("ts")

        req_id = d.pop("req_id")

        contents = []
        _contents = d.pop("contents")
        for contents_item_data in _contents:
            contents_item = McpResourceContent.from_dict(contents_item_data)

            contents.append(contents_item)

        server_id = d.pop("server_id")

        error = d.pop("error")

        resource_read_response = cls(
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            req_id=req_id,
            contents=contents,
            server_id=server_id,
            error=error,
        )

        resource_read_response.additional_properties = d
        return resource_read_response

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
