from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.server_push_type import ServerPushType, check_server_push_type
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.server_push_params import ServerPushParams


T = TypeVar("T", bound="ServerPush")


@_attrs_define
class ServerPush:
    """mcp/server/push: a forwarded MCP notification or a server status change.

    Attributes:
        type_ (ServerPushType): The A2E message type. Default: 'mcp/server/push'.
        id (str): Message id; a UUID when absent.
        version (str): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float): Timestamp, seconds since the Unix epoch; now when absent.
        server_id (str):  Default: ''.
        method (str): The MCP notification method, or `bridge/server_status` / `bridge/events_lost`. Default: ''.
        params (ServerPushParams):
        req_id (None | str | Unset): For progress: the `id` of the call it belongs to.
    """

    id: str
    ts: float
    params: ServerPushParams
    type_: ServerPushType = "mcp/server/push"
    version: str = "1.0"
    server_id: str = ""
    method: str = ""
    req_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_: str = self.type_

        id = self.id

        version = self.version

        ts = self.ts

        server_id = self.server_id

        method = self.method

        params = self.params.to_dict()

        req_id: None | str | Unset
        if isinstance(self.req_id, Unset):
            req_id = UNSET
        else:
            req_id = self.req_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
                "id": id,
                "version": version,
                "ts": ts,
                "server_id": server_id,
                "method": method,
                "params": params,
            }
        )
        if req_id is not UNSET:
            field_dict["req_id"] = req_id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.server_push_params import ServerPushParams

        d = dict(src_dict)
        type_ = check_server_push_type(d.pop("type"))

        id = d.pop("id")

        version = d.pop("version")

        ts = d.pop("ts")

        server_id = d.pop("server_id")

        method = d.pop("method")

        params = ServerPushParams.from_dict(d.pop("params"))

        def _parse_req_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        req_id = _parse_req_id(d.pop("req_id", UNSET))

        server_push = cls(
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            server_id=server_id,
            method=method,
            params=params,
            req_id=req_id,
        )

        server_push.additional_properties = d
        return server_push

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
