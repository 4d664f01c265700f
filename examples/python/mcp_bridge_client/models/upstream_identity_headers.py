from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="UpstreamIdentityHeaders")


@_attrs_define
class UpstreamIdentityHeaders:
    """Header name → template. `{sub}` is the agent's id, `{claims.NAME}` (dotted for nested
    objects, e.g. `{claims.realm_access.roles}`) a claim of its token, `{roles}` its roles
    separated by spaces; `{{` and `}}` are literal braces. A claim the token lacks makes the
    call fail; a value that is not visible ASCII (a CR, LF or NUL, say) is refused at call time.

        Example:
            {'X-Tenant': '{claims.tenant}', 'X-User': '{sub}'}

    """

    additional_properties: dict[str, str] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        upstream_identity_headers = cls()

        upstream_identity_headers.additional_properties = d
        return upstream_identity_headers

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> str:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: str) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
