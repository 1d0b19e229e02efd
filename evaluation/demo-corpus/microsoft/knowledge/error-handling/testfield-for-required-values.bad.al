codeunit 50185 "Transfer Release Check Bad"
{
    procedure CheckBeforeRelease(TransferHeader: Record "Transfer Header")
    var
        FromMissingErr: Label 'Specify a location to transfer from.';
        ToMissingErr: Label 'Specify a location to transfer to.';
        InTransitMissingErr: Label 'Specify an in-transit location.';
    begin
        if TransferHeader."Transfer-from Code" = '' then
            Error(FromMissingErr);
        if TransferHeader."Transfer-to Code" = '' then
            Error(ToMissingErr);
        if TransferHeader."In-Transit Code" = '' then
            Error(InTransitMissingErr);
    end;
}
