from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.error_code import ErrorCode, check_error_code
from ..types import UNSET, Unset

T = TypeVar("T", bound="ErrorBody")


@_attrs_define
class ErrorBody:
    """An error answer: the endpoint's response message (`type` `"error"` when the route has none or
    the request could not be read) with `error`, `code` and `retryable`, and `ok: false` where the
    response message has `ok`.

        Attributes:
            type_ (str):
            id (str):
            version (str):
            ts (float):
            req_id (str): The request's `id`; empty when the body could not be read.
            error (str): A human sentence saying what went wrong.
            code (ErrorCode): The `code` of an error answer.
            retryable (bool):
            ok (bool | None | Unset): Present (and false) where the response message has `ok`.
            authorization_url (None | str | Unset): With `mcp_auth_required`: open it in a browser and approve, then call
                again.
    """

    type_: str
    id: str
    version: str
    ts: float
    req_id: str
    error: str
    code: ErrorCode
    retryable: bool
    ok: bool | None | Unset = UNSET
    authorization_url: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_ = self.type_

        id = self.id

        version = self.version

        ts = self.ts

        req_id = self.req_id

        error = self.error

        code: str = self.code

        retryable = self.retryable

        ok: bool | None | Unset
        if isinstance(self.ok, Unset):
            ok = UNSET
        else:
            ok = self.ok

        authorization_url: None | str | Unset
        if isinstance(self.authorization_url, Unset):
            authorization_url = UNSET
        else:
            authorization_url = self.authorization_url

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
                "id": id,
                "version": version,
                "ts": ts,
                "req_id": req_id,
                "error": error,
                "code": code,
                "retryable": retryable,
            }
        )
        if ok is not UNSET:
            field_dict["ok"] = ok
        if authorization_url is not UNSET:
            field_dict["authorization_url"] = authorization_url

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        type_ = d.pop("type")

        id = d.pop("id")

        version = d.pop("version")

        ts = d.pop("ts")

        req_id = d.pop("req_id")

        error = d.pop("error")

        code = check_error_code(d.pop("code"))

        retryable = d.pop("retryable")

        def _parse_ok(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        ok = _parse_ok(d.pop("ok", UNSET))

        def _parse_authorization_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        authorization_url = _parse_authorization_url(d.pop("authorization_url", UNSET))

        error_body = cls(
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            req_id=req_id,
            error=error,
            code=code,
            retryable=retryable,
            ok=ok,
            authorization_url=authorization_url,
        )

        error_body.additional_properties = d
        return error_body

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
