from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.elicit_request_type import ElicitRequestType, check_elicit_request_type
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.elicit_request_requested_schema_type_0 import (
        ElicitRequestRequestedSchemaType0,
    )


T = TypeVar("T", bound="ElicitRequest")


@_attrs_define
class ElicitRequest:
    """mcp/elicit/req: a server asks the agent (its user) for input.

    Attributes:
        type_ (ElicitRequestType): The A2E message type. Default: 'mcp/elicit/req'.
        id (str): Message id; a UUID when absent.
        version (str): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float): Timestamp, seconds since the Unix epoch; now when absent.
        server_id (str):  Default: ''.
        mcp_request_id (str):  Default: ''.
        mode (str): `form` (answer with `content` matching `requested_schema`) or `url` (open `url`). Default: 'form'.
        message (str):  Default: ''.
        requested_schema (ElicitRequestRequestedSchemaType0 | None | Unset): The JSON Schema of the form, as MCP defines
            it (form mode).
        url (None | str | Unset): The page to open (url mode).
    """

    id: str
    ts: float
    type_: ElicitRequestType = "mcp/elicit/req"
    version: str = "1.0"
    server_id: str = ""
    mcp_request_id: str = ""
    mode: str = "form"
    message: str = ""
    requested_schema: ElicitRequestRequestedSchemaType0 | None | Unset = UNSET
    url: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.elicit_request_requested_schema_type_0 import (
            ElicitRequestRequestedSchemaType0,
        )

        type_: str = self.type_

        id = self.id

        version = self.version

        ts = self.ts

        server_id = self.server_id

        mcp_request_id = self.mcp_request_id

        mode = self.mode

        message = self.message

        requested_schema: dict[str, Any] | None | Unset
        if isinstance(self.requested_schema, Unset):
            requested_schema = UNSET
        elif isinstance(self.requested_schema, ElicitRequestRequestedSchemaType0):
            requested_schema = self.requested_schema.to_dict()
        else:
            requested_schema = self.requested_schema

        url: None | str | Unset
        if isinstance(self.url, Unset):
            url = UNSET
        else:
            url = self.url

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
                "id": id,
                "version": version,
                "ts": ts,
                "server_id": server_id,
                "mcp_request_id": mcp_request_id,
                "mode": mode,
                "message": message,
            }
        )
        if requested_schema is not UNSET:
            field_dict["requested_schema"] = requested_schema
        if url is not UNSET:
            field_dict["url"] = url

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.elicit_request_requested_schema_type_0 import (
            ElicitRequestRequestedSchemaType0,
        )

        d = dict(src_dict)
        type_ = check_elicit_request_type(d.pop("type"))

        id = d.pop("id")

        version = d.pop("version")

        ts = d.pop("ts")

        server_id = d.pop("server_id")

        mcp_request_id = d.pop("mcp_request_id")

        mode = d.pop("mode")

        message = d.pop("message")

        def _parse_requested_schema(
            data: object,
        ) -> ElicitRequestRequestedSchemaType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                requested_schema_type_0 = ElicitRequestRequestedSchemaType0.from_dict(
                    data
                )

                return requested_schema_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ElicitRequestRequestedSchemaType0 | None | Unset, data)

        requested_schema = _parse_requested_schema(d.pop("requested_schema", UNSET))

        def _parse_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        url = _parse_url(d.pop("url", UNSET))

        elicit_request = cls(
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            server_id=server_id,
            mcp_request_id=mcp_request_id,
            mode=mode,
            message=message,
            requested_schema=requested_schema,
            url=url,
        )

        elicit_request.additional_properties = d
        return elicit_request

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
