from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.upstream_identity_headers import UpstreamIdentityHeaders


T = TypeVar("T", bound="UpstreamIdentity")


@_attrs_define
class UpstreamIdentity:
    """UpstreamIdentity: the calling agent's identity sent to an `http`, `sse` or `ws` server as
    headers. A server with `identity` is reached over one connection per agent (its headers are
    the agent's), made on the agent's first call.

        Attributes:
            headers (UpstreamIdentityHeaders | Unset): Header name → template. `{sub}` is the agent's id, `{claims.NAME}`
                (dotted for nested
                objects, e.g. `{claims.realm_access.roles}`) a claim of its token, `{roles}` its roles
                separated by spaces; `{{` and `}}` are literal braces. A claim the token lacks makes the
                call fail; a value that is not visible ASCII (a CR, LF or NUL, say) is refused at call time. Example:
                {'X-Tenant': '{claims.tenant}', 'X-User': '{sub}'}.
            forward_token (bool | None | Unset): DANGEROUS: sends the agent's own bearer token (the one it presented to the
                bridge) to
                the server as `Authorization: Bearer …`. The server can then act as the agent wherever
                that token is accepted, including at this bridge. Prefer OAuth token exchange
                (`auth.grant_type` token_exchange), which gives the server a token for itself alone.
    """

    headers: UpstreamIdentityHeaders | Unset = UNSET
    forward_token: bool | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        headers: dict[str, Any] | Unset = UNSET
        if not isinstance(self.headers, Unset):
            headers = self.headers.to_dict()

        forward_token: bool | None | Unset
        if isinstance(self.forward_token, Unset):
            forward_token = UNSET
        else:
            forward_token = self.forward_token

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if headers is not UNSET:
            field_dict["headers"] = headers
        if forward_token is not UNSET:
            field_dict["forward_token"] = forward_token

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.upstream_identity_headers import UpstreamIdentityHeaders

        d = dict(src_dict)
        _headers = d.pop("headers", UNSET)
        headers: UpstreamIdentityHeaders | Unset
        if isinstance(_headers, Unset):
            headers = UNSET
        else:
            headers = UpstreamIdentityHeaders.from_dict(_headers)

        def _parse_forward_token(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        forward_token = _parse_forward_token(d.pop("forward_token", UNSET))

        upstream_identity = cls(
            headers=headers,
            forward_token=forward_token,
        )

        upstream_identity.additional_properties = d
        return upstream_identity

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
