from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="IdentityProvider")


@_attrs_define
class IdentityProvider:
    """IdentityProvider: where the bridge exchanges an identity assertion for an ID-JAG (an
    Identity Assertion JWT Authorization Grant) by token exchange (RFC 8693), and how it
    authenticates there.

        Attributes:
            issuer (None | str): The identity provider's issuer identifier: the `iss` of the ID-JAGs it issues. Example:
                https://idp.example.com.
            token_endpoint (None | str): The identity provider's token endpoint. Example:
                https://idp.example.com/oauth2/token.
            client_id (None | str): The bridge's client at the identity provider (the audience of the ID tokens it
                exchanges).
            client_secret (None | str | Unset): The secret of `client_id` (secret: shown as `***`); sent with HTTP Basic.
                Without it the
                bridge authenticates as a public client (`client_id` in the body).
            subject_token_type (None | str | Unset): What the identity assertion is (RFC 8693 `subject_token_type`); by
                default an OpenID
                Connect ID token, `urn:ietf:params:oauth:token-type:id_token`.
    """

    issuer: None | str
    token_endpoint: None | str
    client_id: None | str
    client_secret: None | str | Unset = UNSET
    subject_token_type: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        issuer: None | str
        issuer = self.issuer

        token_endpoint: None | str
        token_endpoint = self.token_endpoint

        client_id: None | str
        client_id = self.client_id

        client_secret: None | str | Unset
        if isinstance(self.client_secret, Unset):
            client_secret = UNSET
        else:
            client_secret = self.client_secret

        subject_token_type: None | str | Unset
        if isinstance(self.subject_token_type, Unset):
            subject_token_type = UNSET
        else:
            subject_token_type = self.subject_token_type

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "issuer": issuer,
                "token_endpoint": token_endpoint,
                "client_id": client_id,
            }
        )
        if client_secret is not UNSET:
            field_dict["client_secret"] = client_secret
        if subject_token_type is not UNSET:
            field_dict["subject_token_type"] = subject_token_type

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_issuer(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        issuer = _parse_issuer(d.pop("issuer"))

        def _parse_token_endpoint(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        token_endpoint = _parse_token_endpoint(d.pop("token_endpoint"))

        def _parse_client_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        client_id = _parse_client_id(d.pop("client_id"))

        def _parse_client_secret(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        client_secret = _parse_client_secret(d.pop("client_secret", UNSET))

        def _parse_subject_token_type(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        subject_token_type = _parse_subject_token_type(
            d.pop("subject_token_type", UNSET)
        )

        identity_provider = cls(
            issuer=issuer,
            token_endpoint=token_endpoint,
            client_id=client_id,
            client_secret=client_secret,
            subject_token_type=subject_token_type,
        )

        identity_provider.additional_properties = d
        return identity_provider

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
