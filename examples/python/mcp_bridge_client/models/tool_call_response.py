from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.tool_call_response_type import (
    ToolCallResponseType,
    check_tool_call_response_type,
)
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.tool_call_response_content_item import ToolCallResponseContentItem
    from ..models.tool_call_response_structured_content_type_0 import (
        ToolCallResponseStructuredContentType0,
    )


T = TypeVar("T", bound="ToolCallResponse")


@_attrs_define
class ToolCallResponse:
    """tool/call/resp: the MCP result. An upstream `isError: true` is a 200 with `is_error: true`.

    Attributes:
        type_ (ToolCallResponseType): The A2E message type. Default: 'tool/call/resp'.
        id (str): Message id; a UUID when absent.
        version (str): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float): Timestamp, seconds since the Unix epoch; now when absent.
        req_id (str): Echoes the request's `id`. Default: ''.
        name (str):  Default: ''.
        server_id (str):  Default: ''.
        content (list[ToolCallResponseContentItem]): MCP content blocks, exactly as MCP defines them.
        is_error (bool):  Default: False.
        structured_content (None | ToolCallResponseStructuredContentType0 | Unset):
    """

    id: str
    ts: float
    content: list[ToolCallResponseContentItem]
    type_: ToolCallResponseType = "tool/call/resp"
    version: str = "1.0"
    req_id: str = ""
    name: str = ""
    server_id: str = ""
    is_error: bool = False
    structured_content: None | ToolCallResponseStructuredContentType0 | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.tool_call_response_structured_content_type_0 import (
            ToolCallResponseStructuredContentType0,
        )

        type_: str = self.type_

        id = self.id

        version = self.version

        ts = self.ts

        req_id = self.req_id

        name = self.name

        server_id = self.server_id

        content = []
        for content_item_data in self.content:
            content_item = content_item_data.to_dict()
            content.append(content_item)

        is_error = self.is_error

        structured_content: dict[str, Any] | None | Unset
        if isinstance(self.structured_content, Unset):
            structured_content = UNSET
        elif isinstance(
            self.structured_content, ToolCallResponseStructuredContentType0
        ):
            structured_content = self.structured_content.to_dict()
        else:
            structured_content = self.structured_content

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
                "id": id,
                "version": version,
                "ts": ts,
                "req_id": req_id,
                "name": name,
                "server_id": server_id,
                "content": content,
                "is_error": is_error,
            }
        )
        if structured_content is not UNSET:
            field_dict["structured_content"] = structured_content

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.tool_call_response_content_item import ToolCallResponseContentItem
        from ..models.tool_call_response_structured_content_type_0 import (
            ToolCallResponseStructuredContentType0,
        )

        d = dict(src_dict)
        type_ = check_tool_call_response_type(d.pop("type"))

        id = d.pop("id")

        version = d.pop("version")

        ts = d.pop("ts")

        req_id = d.pop("req_id")

        name = d.pop("name")

        server_id = d.pop("server_id")

        content = []
        _content = d.pop("content")
        for content_item_data in _content:
            content_item = ToolCallResponseContentItem.from_dict(content_item_data)

            content.append(content_item)

        is_error = d.pop("is_error")

        def _parse_structured_content(
            data: object,
        ) -> None | ToolCallResponseStructuredContentType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                structured_content_type_0 = (
                    ToolCallResponseStructuredContentType0.from_dict(data)
                )

                return structured_content_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ToolCallResponseStructuredContentType0 | Unset, data)

        structured_content = _parse_structured_content(
            d.pop("structured_content", UNSET)
        )

        tool_call_response = cls(
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            req_id=req_id,
            name=name,
            server_id=server_id,
            content=content,
            is_error=is_error,
            structured_content=structured_content,
        )

        tool_call_response.additional_properties = d
        return tool_call_response

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
