codeunit 50142 "Bin Export Good"
{
    procedure BinCodes(LocationCode: Code[10]): Text
    var
        Bin: Record Bin;
        Buffer: TextBuilder;
    begin
        Bin.SetRange("Location Code", LocationCode);
        Bin.SetLoadFields(Code, Description);
        if Bin.FindSet() then
            repeat
                Buffer.Append(Bin.Code);
                Buffer.Append(';');
                Buffer.Append(Bin.Description);
                Buffer.Append(';');
            until Bin.Next() = 0;
        exit(Buffer.ToText());
    end;
}
