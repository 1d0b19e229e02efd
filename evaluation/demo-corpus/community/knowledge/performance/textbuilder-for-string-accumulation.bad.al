codeunit 50143 "Bin Export Bad"
{
    procedure BinCodes(LocationCode: Code[10]): Text
    var
        Bin: Record Bin;
        Buffer: Text;
    begin
        Bin.SetRange("Location Code", LocationCode);
        Bin.SetLoadFields(Code, Description);
        if Bin.FindSet() then
            repeat
                // The whole string is copied on every pass.
                Buffer := Buffer + Bin.Code + ';' + Bin.Description + ';';
            until Bin.Next() = 0;
        exit(Buffer);
    end;
}
