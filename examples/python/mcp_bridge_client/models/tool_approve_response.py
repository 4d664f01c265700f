from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.tool_approve_response_type import (
    ToolApproveResponseType,
    check_tool_approve_response_type,
)

if TYPE_CHECKING:
    from ..models.tool_info import ToolInfo


T = TypeVar("T", bound="ToolApproveResponse")


@_attrs_define
class ToolApproveResponse:
    """mcp/tool/approve/resp: the tool as the catalogue shows it now.

    Attributes:
        type_ (ToolApproveResponseType): The A2E message type. Default: 'mcp/tool/approve/resp'.
        id (str): Message id; a UUID when absent.
        version (str): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float): Timestamp, seconds since the Unix epoch; now when absent.
        req_id (str): Echoes the request's `id`. Default: ''.
        ok (bool):  Default: False.
        tool (ToolInfo): One entry of the tool catalogue.
        approved (bool): Whether a changed definition was waiting and is pinned now; `false` when the current
            definition was already the pinned one (nothing to approve, nothing changed). Default: False.
    """

    id: str
    ts: float
    tool: ToolInfo
    type_: ToolApproveResponseType = "mcp/tool/approve/resp"
    version: str = "1.0"
    req_id: str = ""
    ok: bool = False
    approved: bool = False
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_: str = self.type_

        id = self.id

        version = self.version

        ts = self.ts

        req_id = self.req_id

        ok = self.ok

        tool = self.tool.to_dict()

        approved = self.approved

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
                "id": id,
                "version": version,
                "ts": ts,
                "req_id": req_id,
                "ok": ok,
                "tool": tool,
                "approved": approved,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.tool_info import ToolInfo

        d = dict(src_dict)
        type_ = check_tool_approve_response_type(d.pop("type"))

        id = d.pop("id")

        version = d.pop("version")

        ts = d.pop("ts")

        req_id = d.pop("req_id")

        ok = d.pop("ok")

        tool = ToolInfo.from_dict(d.pop("tool"))

        approved = d.pop("approved")

        tool_approve_response = cls(
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            req_id=req_id,
            ok=ok,
            tool=tool,
            approved=approved,
        )

        tool_approve_response.additional_properties = d
        return tool_approve_response

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
